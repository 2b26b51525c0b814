import threading


def live_neighbours(grid, r, c):
    total = 0
    for rr in range(max(r - 1, 0), min(r + 2, len(grid))):
        total += sum(grid[rr][max(c - 1, 0):c + 2])
    return total - grid[r][c]


def next_row(grid, r, out):
    row = []
    for c in range(len(grid[0])):
        n = live_neighbours(grid, r, c)
        alive = n == 3 or (grid[r][c] and n == 2)
        row.append(1 if alive else 0)
    out[r] = row


def step(grid):
    out = [None] * len(grid)
    workers = [threading.Thread(target=next_row, args=(grid, r, out)) for r in range(len(grid))]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return out


def main(rows, generations):
    grid = [[1 if ch == "#" else 0 for ch in row] for row in rows]
    for _ in range(generations):
        grid = step(grid)
    return ["".join("#" if v else "." for v in row) for row in grid]
