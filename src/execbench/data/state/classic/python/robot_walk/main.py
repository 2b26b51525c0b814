import sys

commands = sys.stdin.read().split()
x = y = 0
heading = 0
visited = {(0, 0)}
revisits = 0
for command in commands:
    if command == "L":
        heading = (heading + 3) % 4
    elif command == "R":
        heading = (heading + 1) % 4
    else:
        for _ in range(int(command)):
            x += (0, 1, 0, -1)[heading]
            y += (1, 0, -1, 0)[heading]
            if (x, y) in visited:
                revisits += 1
            visited.add((x, y))
print(x, y, revisits, len(visited))
