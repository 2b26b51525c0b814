import sys

limit = int(sys.stdin.read().split()[0])
best_start = 1
best_len = 1
total = 0
for start in range(1, limit + 1):
    n = start
    length = 1
    while n != 1:
        if n % 2 == 0:
            n //= 2
        else:
            n = 3 * n + 1
        length += 1
    total += length
    if length > best_len:
        best_len = length
        best_start = start
print(best_start, best_len, total)
