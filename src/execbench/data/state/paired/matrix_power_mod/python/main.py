import sys

n = int(sys.stdin.read().split()[0])
MOD = 1009
size = 4
a = [[(i * size + j) % 7 + 1 for j in range(size)] for i in range(size)]
result = [[1 if i == j else 0 for j in range(size)] for i in range(size)]
multiplications = 0
for step in range(n):
    product = [[0] * size for _ in range(size)]
    for i in range(size):
        for j in range(size):
            total = 0
            for k in range(size):
                total += result[i][k] * a[k][j]
            product[i][j] = total % MOD
    result = product
    multiplications += 1
print(multiplications)
for row in result:
    print(" ".join(str(v) for v in row))
