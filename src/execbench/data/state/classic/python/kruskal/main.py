import sys


def find(parent, x):
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


data = list(map(int, sys.stdin.read().split()))
n, m = data[0], data[1]
edges = sorted((data[4 + 3 * i], data[2 + 3 * i], data[3 + 3 * i]) for i in range(m))
parent = list(range(n))
total = used = 0
for w, u, v in edges:
    ru, rv = find(parent, u), find(parent, v)
    if ru != rv:
        parent[ru] = rv
        total += w
        used += 1
print(total, used)
