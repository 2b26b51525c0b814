import sys

values = list(map(int, sys.stdin.read().split()[1:]))
stack = [(0, len(values) - 1)]
comparisons = 0
while stack:
    lo, hi = stack.pop()
    if lo >= hi:
        continue
    pivot = values[hi]
    store = lo
    for k in range(lo, hi):
        comparisons += 1
        if values[k] < pivot:
            values[k], values[store] = values[store], values[k]
            store += 1
    values[store], values[hi] = values[hi], values[store]
    stack.append((lo, store - 1))
    stack.append((store + 1, hi))
print(comparisons)
print(*values)
