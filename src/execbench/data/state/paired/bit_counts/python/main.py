import sys

data = sys.stdin.read().split()
n = int(data[0])
histogram = [0] * 32
total = 0
for k in range(n):
    x = int(data[1 + k])
    bits = 0
    while x:
        x &= x - 1
        bits += 1
    histogram[bits] += 1
    total += bits
print(total)
print(" ".join(str(histogram[b]) for b in range(20)))
