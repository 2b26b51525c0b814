import sys


class Customer:
    def __init__(self, arrival, service):
        self.arrival = arrival
        self.service = service
        self.wait = 0


data = sys.stdin.read().split()
n = int(data[0])
customers = []
clock = 0
for k in range(n):
    clock += int(data[1 + 2 * k]) % 10
    customers.append(Customer(clock, int(data[2 + 2 * k]) % 12 + 1))
free_at = 0
total_wait = 0
longest = 0
for c in customers:
    start = max(free_at, c.arrival)
    c.wait = start - c.arrival
    free_at = start + c.service
    total_wait += c.wait
    longest = max(longest, c.wait)
print(total_wait, longest, free_at)
