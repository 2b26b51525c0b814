import sys

data = list(map(int, sys.stdin.read().split()))
n = data[0]
dims = data[1:n + 2]
cost = [[0] * n for _ in range(n)]
for length in range(2, n + 1):
    for i in range(n - length + 1):
        j = i + length - 1
        best = None
        for k in range(i, j):
            c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
            if best is None or c < best:
                best = c
        cost[i][j] = best
print(cost[0][n - 1])
