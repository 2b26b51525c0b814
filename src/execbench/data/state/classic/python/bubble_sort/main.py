import sys

values = list(map(int, sys.stdin.read().split()[1:]))
n = len(values)
swaps = passes = 0
swapped = True
while swapped:
    swapped = False
    passes += 1
    for i in range(n - passes):
        if values[i] > values[i + 1]:
            values[i], values[i + 1] = values[i + 1], values[i]
            swaps += 1
            swapped = True
print(passes, swaps)
print(*values)
