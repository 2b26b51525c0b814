import sys

data = sys.stdin.read().split()
n = int(data[0])
total_steps = 0
roots = [0] * 10
for k in range(n):
    x = int(data[1 + k]) * 7919
    steps = 0
    while x >= 10:
        s = 0
        while x > 0:
            s += x % 10
            x //= 10
        x = s
        steps += 1
    total_steps += steps
    roots[x] += 1
print(total_steps)
print(" ".join(str(v) for v in roots))
