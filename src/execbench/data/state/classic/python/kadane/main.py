import sys

values = list(map(int, sys.stdin.read().split()[1:]))
best = current = values[0]
start = best_start = best_end = 0
for i in range(1, len(values)):
    if current + values[i] < values[i]:
        current = values[i]
        start = i
    else:
        current += values[i]
    if current > best:
        best, best_start, best_end = current, start, i
print(best, best_start, best_end)
