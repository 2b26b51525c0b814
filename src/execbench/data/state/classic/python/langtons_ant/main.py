import sys

steps = int(sys.stdin.read())
black = set()
x = y = 0
dx, dy = 0, -1
for step in range(steps):
    if (x, y) in black:
        dx, dy = dy, -dx
        black.remove((x, y))
    else:
        dx, dy = -dy, dx
        black.add((x, y))
    x, y = x + dx, y + dy
print(len(black), x, y)
