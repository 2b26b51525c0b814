import heapq
import sys

data = sys.stdin.read().split()
n = int(data[0])
low = []
high = []
total = 0
for k in range(n):
    x = int(data[1 + k])
    if not low or x <= -low[0]:
        heapq.heappush(low, -x)
    else:
        heapq.heappush(high, x)
    if len(low) > len(high) + 1:
        heapq.heappush(high, -heapq.heappop(low))
    elif len(high) > len(low):
        heapq.heappush(low, -heapq.heappop(high))
    median = -low[0]
    total += median
print(total, -low[0], len(low), len(high))
