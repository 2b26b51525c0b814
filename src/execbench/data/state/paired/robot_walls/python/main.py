import sys


class Robot:
    def __init__(self):
        self.x = 0
        self.y = 0
        self.bumps = 0


data = sys.stdin.read().split()
n = int(data[0])
moves = data[1]
size = 12
robot = Robot()
visited = {(0, 0)}
for step in range(n):
    move = moves[step]
    nx = robot.x + (1 if move == "R" else -1 if move == "L" else 0)
    ny = robot.y + (1 if move == "D" else -1 if move == "U" else 0)
    if nx < 0 or ny < 0 or nx >= size or ny >= size or (nx * 3 + ny * 5) % 11 == 0:
        robot.bumps += 1
        continue
    robot.x = nx
    robot.y = ny
    visited.add((nx, ny))
print(robot.x, robot.y, robot.bumps, len(visited))
