import sys

data = list(map(int, sys.stdin.read().split()))
n, m, source = data[0], data[1], data[2]
edges = [tuple(data[3 + 3 * i: 6 + 3 * i]) for i in range(m)]
INF = 10 ** 18
dist = [INF] * n
dist[source] = 0
rounds = 0
changed = True
while changed and rounds < n - 1:
    changed = False
    rounds += 1
    for u, v, w in edges:
        if dist[u] != INF and dist[u] + w < dist[v]:
            dist[v] = dist[u] + w
            changed = True
print(" ".join("INF" if d == INF else str(d) for d in dist))
