import sys

values = list(map(int, sys.stdin.read().split()[1:]))
shifts = 0
for i in range(1, len(values)):
    key = values[i]
    j = i - 1
    while j >= 0 and values[j] > key:
        values[j + 1] = values[j]
        j -= 1
        shifts += 1
    values[j + 1] = key
print(shifts)
print(*values)
