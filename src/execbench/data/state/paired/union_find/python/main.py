import sys

data = sys.stdin.read().split()
n = int(data[0])
m = int(data[1])
parent = list(range(n))
size = [1] * n
components = n
merges = 0
for k in range(m):
    a = int(data[2 + 3 * k])
    b = int(data[3 + 3 * k])
    while parent[a] != a:
        parent[a] = parent[parent[a]]
        a = parent[a]
    while parent[b] != b:
        parent[b] = parent[parent[b]]
        b = parent[b]
    if a == b:
        continue
    if size[a] < size[b]:
        a, b = b, a
    parent[b] = a
    size[a] += size[b]
    components -= 1
    merges += 1
print(components, merges, max(size))
