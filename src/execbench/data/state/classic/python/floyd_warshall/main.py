import sys

data = list(map(int, sys.stdin.read().split()))
n, m = data[0], data[1]
INF = 10 ** 9
dist = [[0 if i == j else INF for j in range(n)] for i in range(n)]
for e in range(m):
    u, v, w = data[2 + 3 * e: 5 + 3 * e]
    dist[u][v] = min(dist[u][v], w)
updates = 0
for k in range(n):
    for i in range(n):
        for j in range(n):
            if dist[i][k] + dist[k][j] < dist[i][j]:
                dist[i][j] = dist[i][k] + dist[k][j]
                updates += 1
print(sum(d for row in dist for d in row if d < INF), updates)
