import sys

text = sys.stdin.read().strip()
pairs = {")": "(", "]": "[", "}": "{"}
stack = []
max_depth = 0
position = 0
ok = True
for position, ch in enumerate(text):
    if ch in "([{":
        stack.append(ch)
        max_depth = max(max_depth, len(stack))
    elif ch in pairs:
        if not stack or stack.pop() != pairs[ch]:
            ok = False
            break
print("balanced" if ok and not stack else f"unbalanced at {position}", max_depth)
