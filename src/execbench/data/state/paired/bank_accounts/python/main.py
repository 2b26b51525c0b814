import sys


class Account:
    def __init__(self):
        self.balance = 100
        self.sent = 0
        self.refused = 0


data = sys.stdin.read().split()
count = int(data[0])
n = int(data[1])
accounts = [Account() for _ in range(count)]
moved = 0
for k in range(n):
    src = int(data[2 + 3 * k])
    dst = int(data[3 + 3 * k])
    amount = int(data[4 + 3 * k])
    if src == dst:
        continue
    if accounts[src].balance < amount:
        accounts[src].refused += 1
        continue
    accounts[src].balance -= amount
    accounts[dst].balance += amount
    accounts[src].sent += 1
    moved += amount
for i in range(count):
    print(i, accounts[i].balance, accounts[i].sent, accounts[i].refused)
print(moved)
