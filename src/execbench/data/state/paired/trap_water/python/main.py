import sys

data = sys.stdin.read().split()
n = int(data[0])
heights = [int(x) % 50 for x in data[1:1 + n]]
left = 0
right = n - 1
left_max = 0
right_max = 0
water = 0
while left < right:
    if heights[left] < heights[right]:
        if heights[left] >= left_max:
            left_max = heights[left]
        else:
            water += left_max - heights[left]
        left += 1
    else:
        if heights[right] >= right_max:
            right_max = heights[right]
        else:
            water += right_max - heights[right]
        right -= 1
print(water, left)
