import math
import sys

data = list(map(int, sys.stdin.read().split()))
n = data[0]
xs, ys = data[1::2], data[2::2]
twice_area = 0
perimeter = 0.0
for i in range(n):
    j = (i + 1) % n
    twice_area += xs[i] * ys[j] - xs[j] * ys[i]
    perimeter += math.hypot(xs[j] - xs[i], ys[j] - ys[i])
print(abs(twice_area) / 2, round(perimeter, 6))
