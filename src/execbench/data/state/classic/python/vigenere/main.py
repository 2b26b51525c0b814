import sys

key, text = sys.stdin.read().split()
out = []
shift_index = 0
for ch in text:
    if ch.isalpha():
        shift = ord(key[shift_index % len(key)]) - ord("a")
        out.append(chr((ord(ch) - ord("a") + shift) % 26 + ord("a")))
        shift_index += 1
    else:
        out.append(ch)
print("".join(out))
