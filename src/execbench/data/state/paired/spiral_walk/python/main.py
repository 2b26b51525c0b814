import sys

n = int(sys.stdin.read().split()[0])
grid = [[(r * 7 + c * 3) % 10 for c in range(n)] for r in range(n)]
top, bottom, left, right = 0, n - 1, 0, n - 1
visited = 0
checksum = 0
while top <= bottom and left <= right:
    for c in range(left, right + 1):
        visited += 1
        checksum = (checksum * 3 + grid[top][c]) % 1000003
    top += 1
    for r in range(top, bottom + 1):
        visited += 1
        checksum = (checksum * 3 + grid[r][right]) % 1000003
    right -= 1
    if top <= bottom:
        for c in range(right, left - 1, -1):
            visited += 1
            checksum = (checksum * 3 + grid[bottom][c]) % 1000003
        bottom -= 1
    if left <= right:
        for r in range(bottom, top - 1, -1):
            visited += 1
            checksum = (checksum * 3 + grid[r][left]) % 1000003
        left += 1
print(visited, checksum)
