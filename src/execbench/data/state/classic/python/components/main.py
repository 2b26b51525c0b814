import sys

data = list(map(int, sys.stdin.read().split()))
n, m = data[0], data[1]
adj = [[] for _ in range(n)]
for i in range(m):
    u, v = data[2 + 2 * i], data[3 + 2 * i]
    adj[u].append(v)
    adj[v].append(u)
component = [-1] * n
count = 0
for s in range(n):
    if component[s] != -1:
        continue
    stack = [s]
    component[s] = count
    while stack:
        u = stack.pop()
        for v in adj[u]:
            if component[v] == -1:
                component[v] = count
                stack.append(v)
    count += 1
print(count, max(component.count(c) for c in range(count)))
