import sys

data = sys.stdin.read().split()
n = int(data[0])
m = int(data[1])
INF = 10 ** 9
dist = [[0 if i == j else INF for j in range(n)] for i in range(n)]
for k in range(m):
    a = int(data[2 + 3 * k])
    b = int(data[3 + 3 * k])
    w = int(data[4 + 3 * k])
    dist[a][b] = min(dist[a][b], w)
    dist[b][a] = min(dist[b][a], w)
updates = 0
for via in range(n):
    for i in range(n):
        for j in range(n):
            if dist[i][via] + dist[via][j] < dist[i][j]:
                dist[i][j] = dist[i][via] + dist[via][j]
                updates += 1
print(updates, sum(sum(row) for row in dist))
