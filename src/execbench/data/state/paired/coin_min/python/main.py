import sys

target = int(sys.stdin.read().split()[0])
coins = [1, 7, 10, 22]
best = [0] + [-1] * target
for amount in range(1, target + 1):
    fewest = -1
    for coin in coins:
        if coin <= amount and best[amount - coin] >= 0:
            candidate = best[amount - coin] + 1
            if fewest < 0 or candidate < fewest:
                fewest = candidate
    best[amount] = fewest
print(best[target])
print(sum(best) % 1000003)
