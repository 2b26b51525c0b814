import sys

data = sys.stdin.read().split()
a, b, n = float(data[0]), float(data[1]), int(data[2])
coeffs = [float(c) for c in data[3:]]


def f(x):
    result = 0.0
    for c in coeffs:
        result = result * x + c
    return result


h = (b - a) / n
total = f(a) + f(b)
for i in range(1, n):
    weight = 4 if i % 2 else 2
    total += weight * f(a + i * h)
print(f"{total * h / 3:.9f}")
