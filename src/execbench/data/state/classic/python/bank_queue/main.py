import sys

data = list(map(int, sys.stdin.read().split()))
n, tellers = data[0], data[1]
customers = list(zip(data[2::2], data[3::2]))
free_at = [0] * tellers
total_wait = 0
max_wait = 0
for arrival, service in customers:
    t = min(range(tellers), key=lambda i: free_at[i])
    start = max(arrival, free_at[t])
    wait = start - arrival
    total_wait += wait
    max_wait = max(max_wait, wait)
    free_at[t] = start + service
print(total_wait, max_wait, max(free_at))
