import heapq
import sys

data = sys.stdin.read().split()
n = int(data[0])
m = int(data[1])
out = [[] for _ in range(n)]
indeg = [0] * n
for k in range(m):
    a = int(data[2 + 3 * k])
    b = int(data[3 + 3 * k])
    out[a].append(b)
    indeg[b] += 1
ready = [v for v in range(n) if indeg[v] == 0]
heapq.heapify(ready)
order = []
while ready:
    u = heapq.heappop(ready)
    order.append(u)
    for v in out[u]:
        indeg[v] -= 1
        if indeg[v] == 0:
            heapq.heappush(ready, v)
checksum = 0
for position, v in enumerate(order):
    checksum = (checksum + position * v) % 1000003
print(len(order), checksum, order[-1])
