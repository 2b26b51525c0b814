import sys

limit = int(sys.stdin.read())
is_prime = [True] * (limit + 1)
is_prime[0] = is_prime[1] = False
count = 0
last = None
for p in range(2, limit + 1):
    if is_prime[p]:
        count += 1
        last = p
        for multiple in range(p * p, limit + 1, p):
            is_prime[multiple] = False
print(count, last)
