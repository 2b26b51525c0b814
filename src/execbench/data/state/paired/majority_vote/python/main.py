import sys

data = sys.stdin.read().split()
n = int(data[0])
values = [int(x) % 4 for x in data[1:1 + n]]
candidate = -1
votes = 0
switches = 0
for v in values:
    if votes == 0:
        candidate = v
        votes = 1
        switches += 1
    elif v == candidate:
        votes += 1
    else:
        votes -= 1
support = 0
for v in values:
    if v == candidate:
        support += 1
print(candidate, votes, switches, support)
