import sys

data = sys.stdin.read().split()
n = int(data[0])
gas = [int(data[1 + 2 * k]) % 20 for k in range(n)]
cost = [int(data[2 + 2 * k]) % 19 for k in range(n)]
start = 0
tank = 0
balance = 0
resets = 0
for i in range(n):
    tank += gas[i] - cost[i]
    balance += gas[i] - cost[i]
    if tank < 0:
        start = i + 1
        tank = 0
        resets += 1
print(start if balance >= 0 else -1, balance, resets)
