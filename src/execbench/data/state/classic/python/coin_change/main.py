import sys

data = list(map(int, sys.stdin.read().split()))
amount, coins = data[0], data[2:]
ways = [1] + [0] * amount
for coin in coins:
    for value in range(coin, amount + 1):
        ways[value] += ways[value - coin]
print(ways[amount])
