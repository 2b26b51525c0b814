import sys

data = sys.stdin.read().split()
n = int(data[0])
values = [int(x) for x in data[1:1 + n]]
moves = 0
comparisons = 0
for i in range(n - 1):
    smallest = i
    for j in range(i + 1, n):
        comparisons += 1
        if values[j] < values[smallest]:
            smallest = j
    if smallest != i:
        values[i], values[smallest] = values[smallest], values[i]
        moves += 1
print(moves, comparisons)
print(" ".join(str(v) for v in values))
