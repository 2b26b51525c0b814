import sys

data = sys.stdin.read().split()
n = int(data[0])
total_steps = 0
longest = 0
checksum = 0
for k in range(n):
    a = int(data[1 + 2 * k])
    b = int(data[2 + 2 * k])
    steps = 0
    while b != 0:
        a, b = b, a % b
        steps += 1
    total_steps += steps
    longest = max(longest, steps)
    checksum = (checksum * 31 + a) % 1000003
print(total_steps, longest, checksum)
