import sys

lines = sys.stdin.read().split()
generations = int(lines[0])
grid = [list(row) for row in lines[1:]]
rows, cols = len(grid), len(grid[0])
alive = sum(row.count("#") for row in grid)
for gen in range(generations):
    nxt = [["."] * cols for _ in range(rows)]
    for r in range(rows):
        for c in range(cols):
            n = sum(grid[(r + dr) % rows][(c + dc) % cols] == "#"
                    for dr in (-1, 0, 1) for dc in (-1, 0, 1) if dr or dc)
            if n == 3 or (n == 2 and grid[r][c] == "#"):
                nxt[r][c] = "#"
    grid = nxt
    alive = sum(row.count("#") for row in grid)
print(alive)
print("\n".join("".join(row) for row in grid))
