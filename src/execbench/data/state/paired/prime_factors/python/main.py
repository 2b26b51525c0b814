import sys

data = sys.stdin.read().split()
n = int(data[0])
distinct_total = 0
largest = 0
for k in range(n):
    x = int(data[1 + k])
    d = 2
    distinct = 0
    while d * d <= x:
        if x % d == 0:
            distinct += 1
            while x % d == 0:
                x //= d
        d += 1
    if x > 1:
        distinct += 1
        largest = max(largest, x)
    distinct_total += distinct
print(distinct_total, largest)
