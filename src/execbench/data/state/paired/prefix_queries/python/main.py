import sys

data = sys.stdin.read().split()
n = int(data[0])
values = [int(data[1 + 2 * k]) % 100 for k in range(n)]
prefix = [0] * (n + 1)
for i in range(n):
    prefix[i + 1] = prefix[i] + values[i]
answer = 0
best = -1
for q in range(n):
    a = int(data[2 + 2 * q]) % n
    b = (a + q) % n
    lo = min(a, b)
    hi = max(a, b)
    s = prefix[hi + 1] - prefix[lo]
    answer = (answer * 13 + s) % 1000003
    best = max(best, s)
print(answer, best)
