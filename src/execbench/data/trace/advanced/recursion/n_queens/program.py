def place(row, n, cols, diag, anti):
    if row == n:
        return 1
    total = 0
    for col in range(n):
        if col in cols or (row - col) in diag or (row + col) in anti:
            continue
        cols.add(col)
        diag.add(row - col)
        anti.add(row + col)
        total += place(row + 1, n, cols, diag, anti)
        cols.remove(col)
        diag.remove(row - col)
        anti.remove(row + col)
    return total


def count_queens(n):
    return place(0, n, set(), set(), set())
