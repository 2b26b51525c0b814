import sys

text = sys.stdin.read().split()[0]
pattern = "abab"
n = len(text)
m = len(pattern)
found = 0
checks = 0
last = -1
for start in range(n - m + 1):
    k = 0
    while k < m:
        checks += 1
        if text[start + k] != pattern[k]:
            break
        k += 1
    if k == m:
        found += 1
        last = start
print(found, checks, last)
