import sys

data = list(map(int, sys.stdin.read().split()))
pts = list(zip(data[1::2], data[2::2]))
best = None
pair = None
for i in range(len(pts)):
    for j in range(i + 1, len(pts)):
        dx, dy = pts[i][0] - pts[j][0], pts[i][1] - pts[j][1]
        d = dx * dx + dy * dy
        if best is None or d < best:
            best, pair = d, (i, j)
print(best, *pair)
