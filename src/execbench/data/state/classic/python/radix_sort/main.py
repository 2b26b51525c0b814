import sys

values = list(map(int, sys.stdin.read().split()[1:]))
exp = 1
passes = 0
while max(values) // exp > 0:
    buckets = [[] for _ in range(10)]
    for v in values:
        buckets[(v // exp) % 10].append(v)
    values = [v for bucket in buckets for v in bucket]
    exp *= 10
    passes += 1
print(passes)
print(*values)
