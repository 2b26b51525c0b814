import sys

data = sys.stdin.read().split()
n = int(data[0])
m = int(data[1])
INF = 10 ** 9
weight = [[INF] * n for _ in range(n)]
for k in range(m):
    a = int(data[2 + 3 * k])
    b = int(data[3 + 3 * k])
    w = int(data[4 + 3 * k])
    weight[a][b] = min(weight[a][b], w)
    weight[b][a] = min(weight[b][a], w)
dist = [INF] * n
done = [False] * n
dist[0] = 0
settled = 0
for round_ in range(n):
    u = -1
    for v in range(n):
        if not done[v] and (u < 0 or dist[v] < dist[u]):
            u = v
    if dist[u] == INF:
        break
    done[u] = True
    settled += 1
    for v in range(n):
        if weight[u][v] < INF and dist[u] + weight[u][v] < dist[v]:
            dist[v] = dist[u] + weight[u][v]
print(settled, sum(dist), max(dist))
