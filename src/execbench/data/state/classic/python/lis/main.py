import sys
from bisect import bisect_left

nums = list(map(int, sys.stdin.read().split()[1:]))
tails = []
for x in nums:
    k = bisect_left(tails, x)
    if k == len(tails):
        tails.append(x)
    else:
        tails[k] = x
print(len(tails))
