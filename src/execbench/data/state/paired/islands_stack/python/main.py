import sys

data = sys.stdin.read().split()
rows = int(data[0])
cols = int(data[1])
cells = [list(row) for row in data[2:2 + rows]]
islands = 0
largest = 0
for r in range(rows):
    for c in range(cols):
        if cells[r][c] != "#":
            continue
        islands += 1
        size = 0
        stack = [(r, c)]
        cells[r][c] = "x"
        while stack:
            y, x = stack.pop()
            size += 1
            for ny, nx in ((y + 1, x), (y - 1, x), (y, x + 1), (y, x - 1)):
                if 0 <= ny < rows and 0 <= nx < cols and cells[ny][nx] == "#":
                    cells[ny][nx] = "x"
                    stack.append((ny, nx))
        largest = max(largest, size)
print(islands, largest)
