def fill(grid, r, c, seen):
    if r < 0 or c < 0 or r >= len(grid) or c >= len(grid[0]):
        return 0
    if grid[r][c] != "#" or (r, c) in seen:
        return 0
    seen.add((r, c))
    size = 1
    size += fill(grid, r + 1, c, seen)
    size += fill(grid, r - 1, c, seen)
    size += fill(grid, r, c + 1, seen)
    size += fill(grid, r, c - 1, seen)
    return size


def count_islands(rows):
    seen = set()
    sizes = []
    for r in range(len(rows)):
        for c in range(len(rows[0])):
            if rows[r][c] == "#" and (r, c) not in seen:
                sizes.append(fill(rows, r, c, seen))
    return len(sizes), sorted(sizes)
