import sys

limit = int(sys.stdin.read().split()[0])
longest = 0
longest_m = 0
total = 0
for m in range(2, limit + 1):
    a = 0
    b = 1
    period = 0
    while True:
        a, b = b, (a + b) % m
        period += 1
        if a == 0 and b == 1:
            break
    total += period
    if period > longest:
        longest = period
        longest_m = m
print(longest_m, longest, total)
