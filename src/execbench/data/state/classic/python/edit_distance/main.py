import sys

s, t = sys.stdin.read().split()
m, n = len(s), len(t)
row = list(range(n + 1))
for i in range(1, m + 1):
    diag, row[0] = row[0], i
    for j in range(1, n + 1):
        cost = 0 if s[i - 1] == t[j - 1] else 1
        diag, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, diag + cost)
print(row[n])
