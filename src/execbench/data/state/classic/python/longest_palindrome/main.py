import sys

s = sys.stdin.read().strip()
best_start, best_len = 0, 1
for center in range(2 * len(s) - 1):
    left = center // 2
    right = left + center % 2
    while left >= 0 and right < len(s) and s[left] == s[right]:
        left -= 1
        right += 1
    length = right - left - 1
    if length > best_len:
        best_start, best_len = left + 1, length
print(best_len, s[best_start:best_start + best_len])
