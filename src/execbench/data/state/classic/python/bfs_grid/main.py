import sys
from collections import deque

lines = sys.stdin.read().split()
rows, cols = int(lines[0]), int(lines[1])
grid = lines[2:2 + rows]
start = goal = None
for r in range(rows):
    for c in range(cols):
        if grid[r][c] == "S":
            start = (r, c)
        elif grid[r][c] == "G":
            goal = (r, c)
dist = {start: 0}
queue = deque([start])
expanded = 0
while queue:
    r, c = queue.popleft()
    expanded += 1
    if (r, c) == goal:
        break
    for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        nr, nc = r + dr, c + dc
        if 0 <= nr < rows and 0 <= nc < cols and grid[nr][nc] != "#" and (nr, nc) not in dist:
            dist[(nr, nc)] = dist[(r, c)] + 1
            queue.append((nr, nc))
print(dist.get(goal, -1), expanded)
