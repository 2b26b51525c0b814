import sys

limit = int(sys.stdin.read().split()[0])
happy = 0
steps_total = 0
for start in range(1, limit + 1):
    seen = set()
    x = start
    while x != 1 and x not in seen:
        seen.add(x)
        s = 0
        while x > 0:
            s += (x % 10) * (x % 10)
            x //= 10
        x = s
        steps_total += 1
    if x == 1:
        happy += 1
print(happy, steps_total)
