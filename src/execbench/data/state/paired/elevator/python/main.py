import sys


class Elevator:
    def __init__(self):
        self.floor = 0
        self.travelled = 0
        self.stops = 0


data = sys.stdin.read().split()
n = int(data[0])
requests = [int(x) % 20 for x in data[1:1 + n]]
lift = Elevator()
for target in requests:
    if target == lift.floor:
        continue
    step = 1 if target > lift.floor else -1
    while lift.floor != target:
        lift.floor += step
        lift.travelled += 1
    lift.stops += 1
print(lift.floor, lift.travelled, lift.stops)
