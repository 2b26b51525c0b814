import sys

data = sys.stdin.read().split()
n = int(data[0])
intervals = []
for k in range(n):
    start = int(data[1 + 2 * k]) % 1000
    length = int(data[2 + 2 * k]) % 30
    intervals.append((start, start + length))
intervals.sort()
merged = 0
covered = 0
cur_start, cur_end = intervals[0]
for start, end in intervals[1:]:
    if start <= cur_end:
        if end > cur_end:
            cur_end = end
    else:
        covered += cur_end - cur_start
        merged += 1
        cur_start = start
        cur_end = end
covered += cur_end - cur_start
merged += 1
print(merged, covered)
