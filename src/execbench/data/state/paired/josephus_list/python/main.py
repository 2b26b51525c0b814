import sys

data = sys.stdin.read().split()
n = int(data[0])
step = 3
people = list(range(1, n + 1))
index = 0
removed = 0
last_out = 0
while len(people) > 1:
    index = (index + step - 1) % len(people)
    last_out = people.pop(index)
    removed += 1
print(people[0], last_out, removed)
