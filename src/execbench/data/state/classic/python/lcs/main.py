import sys

a, b = sys.stdin.read().split()
prev = [0] * (len(b) + 1)
for i, ch in enumerate(a, 1):
    cur = [0] * (len(b) + 1)
    for j in range(1, len(b) + 1):
        if ch == b[j - 1]:
            cur[j] = prev[j - 1] + 1
        else:
            cur[j] = max(prev[j], cur[j - 1])
    prev = cur
print(prev[len(b)])
