import sys

data = sys.stdin.read().split()
n = int(data[0])
digit_counts = {}
longest = ""
for k in range(n):
    x = int(data[1 + k])
    digits = ""
    while x > 0:
        digits = str(x % 7) + digits
        x //= 7
    for d in digits:
        digit_counts[d] = digit_counts.get(d, 0) + 1
    if len(digits) > len(longest) or (len(digits) == len(longest) and digits > longest):
        longest = digits
for d in sorted(digit_counts):
    print(d, digit_counts[d])
print(longest)
