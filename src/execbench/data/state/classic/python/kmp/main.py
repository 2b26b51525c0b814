import sys

text, pattern = sys.stdin.read().split()
fail = [0] * len(pattern)
k = 0
for i in range(1, len(pattern)):
    while k and pattern[i] != pattern[k]:
        k = fail[k - 1]
    if pattern[i] == pattern[k]:
        k += 1
    fail[i] = k
count = last = 0
k = 0
for i, ch in enumerate(text):
    while k and ch != pattern[k]:
        k = fail[k - 1]
    if ch == pattern[k]:
        k += 1
    if k == len(pattern):
        count += 1
        last = i - k + 1
        k = fail[k - 1]
print(count, last)
