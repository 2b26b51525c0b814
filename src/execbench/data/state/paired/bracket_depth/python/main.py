import sys

text = sys.stdin.read().split()[0]
depth = 0
max_depth = 0
position = 0
error = -1
pairs = 0
while position < len(text):
    ch = text[position]
    if ch == "(":
        depth += 1
        max_depth = max(max_depth, depth)
    else:
        depth -= 1
        pairs += 1
        if depth < 0:
            error = position
            break
    position += 1
print(max_depth, pairs, error, depth)
