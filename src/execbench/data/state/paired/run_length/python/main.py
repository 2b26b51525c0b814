import sys

text = sys.stdin.read().split()[0]
pieces = []
run_char = text[0]
run_len = 0
longest = 0
for ch in text:
    if ch == run_char:
        run_len += 1
    else:
        pieces.append(str(run_len) + run_char)
        run_char = ch
        run_len = 1
    longest = max(longest, run_len)
pieces.append(str(run_len) + run_char)
encoded = "".join(pieces)
print(len(pieces), longest)
print(encoded[:60])
