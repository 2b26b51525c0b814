import sys

a, b = sys.stdin.read().split()
rows = len(a) + 1
cols = len(b) + 1
table = [[0] * cols for _ in range(rows)]
for i in range(1, rows):
    for j in range(1, cols):
        if a[i - 1] == b[j - 1]:
            table[i][j] = table[i - 1][j - 1] + 1
        else:
            table[i][j] = max(table[i - 1][j], table[i][j - 1])
i = rows - 1
j = cols - 1
common = []
while i > 0 and j > 0:
    if a[i - 1] == b[j - 1]:
        common.append(a[i - 1])
        i -= 1
        j -= 1
    elif table[i - 1][j] >= table[i][j - 1]:
        i -= 1
    else:
        j -= 1
print(table[rows - 1][cols - 1])
print("".join(reversed(common)))
