import sys

n = int(sys.stdin.read().split()[0])
MOD = 1000
row = [1]
odd_total = 0
for r in range(1, n + 1):
    nxt = [1] * (r + 1)
    for k in range(1, r):
        nxt[k] = (row[k - 1] + row[k]) % MOD
    row = nxt
    odd_total += sum(1 for v in row if v % 2 == 1)
print(odd_total)
print(sum(row) % MOD, row[len(row) // 2])
