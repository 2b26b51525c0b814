import sys

data = sys.stdin.read().split()
n = int(data[0])
stock = {}
shortages = 0
for k in range(n):
    item = int(data[1 + 2 * k]) % 9
    qty = int(data[2 + 2 * k]) % 20 - 8
    have = stock.get(item, 0)
    if have + qty < 0:
        shortages += 1
        continue
    stock[item] = have + qty
for item in sorted(stock):
    if stock[item] > 0:
        print(item, stock[item])
print(shortages)
