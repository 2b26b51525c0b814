import sys
from collections import deque

data = list(map(int, sys.stdin.read().split()))
n, m = data[0], data[1]
succ = [[] for _ in range(n)]
indeg = [0] * n
for i in range(m):
    u, v = data[2 + 2 * i], data[3 + 2 * i]
    succ[u].append(v)
    indeg[v] += 1
ready = deque(v for v in range(n) if indeg[v] == 0)
order = []
while ready:
    u = ready.popleft()
    order.append(u)
    for v in succ[u]:
        indeg[v] -= 1
        if indeg[v] == 0:
            ready.append(v)
print(" ".join(map(str, order)) if len(order) == n else "cycle")
