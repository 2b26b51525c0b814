import sys

text = sys.stdin.read().split()[0]
n = len(text)
best = 0
comparisons = 0
for start in range(1, n):
    k = 0
    while k < n:
        comparisons += 1
        a = text[(start + k) % n]
        b = text[(best + k) % n]
        if a != b:
            if a < b:
                best = start
            break
        k += 1
print(best, comparisons)
print(text[best:] + text[:best])
