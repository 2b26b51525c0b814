import sys

data = sys.stdin.read().split()
n = int(data[0])
values = sorted(int(x) for x in data[1:1 + n])
found = 0
probes = 0
for q in range(n):
    target = values[q] + q % 3 - 1
    lo = 0
    hi = n - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        probes += 1
        if values[mid] == target:
            found += 1
            break
        if values[mid] < target:
            lo = mid + 1
        else:
            hi = mid - 1
print(found, probes)
