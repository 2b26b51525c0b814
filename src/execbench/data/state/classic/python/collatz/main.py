import sys

limit = int(sys.stdin.read())
best_n, best_len = 1, 1
cache = {1: 1}
for start in range(2, limit + 1):
    n, steps = start, 0
    path = []
    while n not in cache:
        path.append(n)
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    length = cache[n]
    for value in reversed(path):
        length += 1
        cache[value] = length
    if length > best_len:
        best_n, best_len = start, length
print(best_n, best_len)
