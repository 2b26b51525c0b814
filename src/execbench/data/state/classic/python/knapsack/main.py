import sys


def main():
    data = sys.stdin.read().split()
    n, cap = int(data[0]), int(data[1])
    items = [(int(data[2 + 2 * i]), int(data[3 + 2 * i])) for i in range(n)]
    best = [0] * (cap + 1)
    taken = 0
    for weight, value in items:
        improved = False
        for c in range(cap, weight - 1, -1):
            if best[c - weight] + value > best[c]:
                best[c] = best[c - weight] + value
                improved = True
        if improved:
            taken += 1
    print(best[cap])


main()
