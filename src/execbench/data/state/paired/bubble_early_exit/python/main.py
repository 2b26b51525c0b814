import sys

data = sys.stdin.read().split()
n = int(data[0])
values = [int(x) for x in data[1:1 + n]]
swaps = 0
passes = 0
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
print(" ".join(str(v) for v in values))
