import sys

text = sys.stdin.read().strip()
counts = {}
letters = 0
best_letter = ""
best_count = 0
for ch in text:
    if ch == " ":
        continue
    letters += 1
    counts[ch] = counts.get(ch, 0) + 1
    if counts[ch] > best_count or (counts[ch] == best_count and ch < best_letter):
        best_count = counts[ch]
        best_letter = ch
for ch in sorted(counts):
    print(ch, counts[ch])
print(letters, best_letter, best_count)
