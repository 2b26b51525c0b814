import sys

numbers = list(map(float, sys.stdin.read().split()[1:]))
total_steps = 0
for a in numbers:
    x = a if a > 1 else 1.0
    steps = 0
    while True:
        nxt = 0.5 * (x + a / x)
        steps += 1
        if abs(nxt - x) < 1e-12:
            break
        x = nxt
    total_steps += steps
    print(f"{a:g} {nxt:.10f} {steps}")
print(total_steps)
