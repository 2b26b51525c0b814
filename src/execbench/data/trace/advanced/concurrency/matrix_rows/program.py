import threading


class Matrix:
    def __init__(self, rows):
        self.rows = rows
        self.n = len(rows)
        self.m = len(rows[0])

    def column(self, j):
        return [row[j] for row in self.rows]


def dot(u, v):
    total = 0
    for a, b in zip(u, v):
        total += a * b
    return total


def compute_row(a, b, i, out):
    out[i] = [dot(a.rows[i], b.column(j)) for j in range(b.m)]


def main(left, right):
    a, b = Matrix(left), Matrix(right)
    out = [None] * a.n
    threads = [threading.Thread(target=compute_row, args=(a, b, i, out)) for i in range(a.n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out
