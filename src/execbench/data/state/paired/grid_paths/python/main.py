import sys

lines = sys.stdin.read().split()
rows = int(lines[0])
cols = int(lines[1])
cells = lines[2:2 + rows]
MOD = 1000000007
ways = [[0] * cols for _ in range(rows)]
ways[0][0] = 1
blocked = 0
for r in range(rows):
    for c in range(cols):
        if cells[r][c] == "#":
            ways[r][c] = 0
            blocked += 1
            continue
        if r > 0:
            ways[r][c] = (ways[r][c] + ways[r - 1][c]) % MOD
        if c > 0:
            ways[r][c] = (ways[r][c] + ways[r][c - 1]) % MOD
print(ways[rows - 1][cols - 1], blocked)
