import sys

values = list(map(int, sys.stdin.read().split()[1:]))
n = len(values)
width = 1
inversions = 0
while width < n:
    merged = []
    for lo in range(0, n, 2 * width):
        mid, hi = min(lo + width, n), min(lo + 2 * width, n)
        i, j = lo, mid
        while i < mid and j < hi:
            if values[j] < values[i]:
                merged.append(values[j])
                inversions += mid - i
                j += 1
            else:
                merged.append(values[i])
                i += 1
        merged.extend(values[i:mid])
        merged.extend(values[j:hi])
    values = merged
    width *= 2
print(inversions)
print(*values)
