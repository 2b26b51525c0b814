import sys

data = sys.stdin.read().split()
n = int(data[0])
values = [int(x) for x in data[1:1 + n]]
length = [1] * n
best = 0
for i in range(n):
    for j in range(i):
        if values[j] < values[i] and length[j] + 1 > length[i]:
            length[i] = length[j] + 1
    if length[i] > best:
        best = length[i]
print(best)
print(" ".join(str(v) for v in length))
