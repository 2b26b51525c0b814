import sys

data = sys.stdin.read().split()
n = int(data[0])
items = [(int(data[1 + 2 * k]), int(data[2 + 2 * k])) for k in range(n)]
capacity = 10 * n
best = [0] * (capacity + 1)
for weight, value in items:
    for c in range(capacity, weight - 1, -1):
        if best[c - weight] + value > best[c]:
            best[c] = best[c - weight] + value
print(best[capacity])
print(best[capacity // 2])
