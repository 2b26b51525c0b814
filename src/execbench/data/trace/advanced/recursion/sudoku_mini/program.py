def allowed(grid, pos, value):
    row, col = divmod(pos, 4)
    for i in range(4):
        if grid[row * 4 + i] == value or grid[i * 4 + col] == value:
            return False
    box_row, box_col = row - row % 2, col - col % 2
    for r in range(box_row, box_row + 2):
        for c in range(box_col, box_col + 2):
            if grid[r * 4 + c] == value:
                return False
    return True


def fill(grid):
    if "." not in grid:
        return True
    pos = grid.index(".")
    for value in "1234":
        if allowed(grid, pos, value):
            grid[pos] = value
            if fill(grid):
                return True
            grid[pos] = "."
    return False


def solve_grid(text):
    grid = list(text)
    ok = fill(grid)
    return ok, "".join(grid)
