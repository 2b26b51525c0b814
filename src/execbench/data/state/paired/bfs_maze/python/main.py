import sys
from collections import deque

data = sys.stdin.read().split()
rows = int(data[0])
cols = int(data[1])
cells = data[2:2 + rows]
dist = [[-1] * cols for _ in range(rows)]
dist[0][0] = 0
queue = deque([(0, 0)])
expanded = 0
answer = -1
while queue:
    r, c = queue.popleft()
    expanded += 1
    if r == rows - 1 and c == cols - 1:
        answer = dist[r][c]
        break
    for dr, dc in ((1, 0), (0, 1), (-1, 0), (0, -1)):
        nr = r + dr
        nc = c + dc
        if 0 <= nr < rows and 0 <= nc < cols and cells[nr][nc] == "." and dist[nr][nc] < 0:
            dist[nr][nc] = dist[r][c] + 1
            queue.append((nr, nc))
print(answer, expanded)
