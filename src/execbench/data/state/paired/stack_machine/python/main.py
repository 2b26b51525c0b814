import sys

data = sys.stdin.read().split()
n = int(data[0])
stack = []
errors = 0
peak = 0
for k in range(n):
    op = int(data[1 + 2 * k]) % 4
    value = int(data[2 + 2 * k]) % 100
    if op <= 1:
        stack.append(value)
    elif op == 2:
        if not stack:
            errors += 1
            continue
        stack.pop()
    else:
        if len(stack) < 2:
            errors += 1
            continue
        b = stack.pop()
        a = stack.pop()
        stack.append((a + b) % 1000)
    peak = max(peak, len(stack))
print(len(stack), sum(stack), errors, peak)
