import sys
from collections import deque

data = sys.stdin.read().split()
n = int(data[0])
values = [int(x) for x in data[1:1 + n]]
width = 5
window = deque()
total = 0
changes = 0
last = -1
for i in range(n):
    while window and values[window[-1]] <= values[i]:
        window.pop()
    window.append(i)
    if window[0] <= i - width:
        window.popleft()
    if i >= width - 1:
        best = values[window[0]]
        total += best
        if best != last:
            changes += 1
        last = best
print(total, changes)
