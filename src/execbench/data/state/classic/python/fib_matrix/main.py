import sys

n, mod = map(int, sys.stdin.read().split())


def multiply(x, y):
    return [[(x[i][0] * y[0][j] + x[i][1] * y[1][j]) % mod for j in range(2)] for i in range(2)]


result = [[1, 0], [0, 1]]
base = [[1, 1], [1, 0]]
e = n
while e > 0:
    if e & 1:
        result = multiply(result, base)
    base = multiply(base, base)
    e >>= 1
print(result[0][1])
