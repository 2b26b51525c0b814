import sys

BASE, MOD = 256, 1_000_003
text, pattern = sys.stdin.read().split()
m = len(pattern)
target = window = 0
high = pow(BASE, m - 1, MOD)
for ch in pattern:
    target = (target * BASE + ord(ch)) % MOD
hits = 0
first = -1
for i, ch in enumerate(text):
    if i >= m:
        window = (window - ord(text[i - m]) * high) % MOD
    window = (window * BASE + ord(ch)) % MOD
    if i >= m - 1 and window == target and text[i - m + 1:i + 1] == pattern:
        hits += 1
        if first < 0:
            first = i - m + 1
print(hits, first)
