import sys

n, k = map(int, sys.stdin.read().split())
people = list(range(1, n + 1))
index = 0
removed = 0
last_out = None
while len(people) > 1:
    index = (index + k - 1) % len(people)
    last_out = people.pop(index)
    removed += 1
print(people[0], last_out, removed)
