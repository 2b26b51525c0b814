import sys

data = sys.stdin.read().split()
n = int(data[0])
rows = []
pos = 1
for r in range(n):
    rows.append([int(data[pos + k]) % 100 for k in range(r + 1)])
    pos += r + 1
best = list(rows[n - 1])
for r in range(n - 2, -1, -1):
    for k in range(r + 1):
        best[k] = rows[r][k] + max(best[k], best[k + 1])
print(best[0])
