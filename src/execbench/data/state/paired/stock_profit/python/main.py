import sys

data = sys.stdin.read().split()
n = int(data[0])
prices = [int(x) for x in data[1:1 + n]]
low_day = 0
best = 0
buy = 0
sell = 0
for day in range(1, n):
    if prices[day] < prices[low_day]:
        low_day = day
    elif prices[day] - prices[low_day] > best:
        best = prices[day] - prices[low_day]
        buy = low_day
        sell = day
print(best, buy, sell)
