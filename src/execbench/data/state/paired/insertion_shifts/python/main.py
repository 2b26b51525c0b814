import sys

data = sys.stdin.read().split()
n = int(data[0])
values = [int(x) for x in data[1:1 + n]]
shifts = 0
for i in range(1, n):
    key = values[i]
    j = i - 1
    while j >= 0 and values[j] > key:
        values[j + 1] = values[j]
        j -= 1
        shifts += 1
    values[j + 1] = key
print(shifts, values[0], values[n // 2], values[n - 1])
