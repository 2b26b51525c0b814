import sys

text = sys.stdin.read().split()[0]
n = len(text)
count = 0
longest = 1
for center in range(2 * n - 1):
    left = center // 2
    right = left + center % 2
    while left >= 0 and right < n and text[left] == text[right]:
        count += 1
        if right - left + 1 > longest:
            longest = right - left + 1
        left -= 1
        right += 1
print(count, longest)
