import sys

times = int(sys.stdin.read().split()[0])
n = 6
matrix = [[r * n + c for c in range(n)] for r in range(n)]
rotations = 0
for t in range(times):
    rotated = [[0] * n for _ in range(n)]
    for r in range(n):
        for c in range(n):
            rotated[c][n - 1 - r] = matrix[r][c]
    matrix = rotated
    rotations += 1
    if t % 3 == 2:
        matrix[0][0] += 1
print(rotations)
for row in matrix:
    print(" ".join(str(v) for v in row))
