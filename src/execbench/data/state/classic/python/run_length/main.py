import sys

text = sys.stdin.read().strip()
pieces = []
run_char, run_len = text[0], 1
for ch in text[1:]:
    if ch == run_char:
        run_len += 1
    else:
        pieces.append(f"{run_len}{run_char}")
        run_char, run_len = ch, 1
pieces.append(f"{run_len}{run_char}")
print("".join(pieces))
