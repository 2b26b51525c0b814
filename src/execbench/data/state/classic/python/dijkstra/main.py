import heapq
import sys

data = list(map(int, sys.stdin.read().split()))
n, m = data[0], data[1]
adj = [[] for _ in range(n)]
for e in range(m):
    u, v, w = data[2 + 3 * e: 5 + 3 * e]
    adj[u].append((v, w))
    adj[v].append((u, w))
dist = [-1] * n
heap = [(0, 0)]
settled = 0
while heap:
    d, u = heapq.heappop(heap)
    if dist[u] != -1:
        continue
    dist[u] = d
    settled += 1
    for v, w in adj[u]:
        if dist[v] == -1:
            heapq.heappush(heap, (d + w, v))
print(*dist)
