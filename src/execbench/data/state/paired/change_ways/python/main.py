import sys

target = int(sys.stdin.read().split()[0])
coins = [2, 3, 7, 11]
MOD = 1000000007
ways = [1] + [0] * target
for coin in coins:
    for amount in range(coin, target + 1):
        ways[amount] = (ways[amount] + ways[amount - coin]) % MOD
print(ways[target], ways[target // 2])
