import sys

data = sys.stdin.read().split()
n = int(data[0])
values = [int(x) for x in data[1:1 + n]]
target = 200
seen = {}
pairs = 0
for v in values:
    pairs += seen.get(target - v, 0)
    seen[v] = seen.get(v, 0) + 1
print(pairs)
print(len(seen))
