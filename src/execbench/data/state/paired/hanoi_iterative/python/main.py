import sys

n = int(sys.stdin.read().split()[0])
pegs = [list(range(n, 0, -1)), [], []]
moves = 0
total = 2 ** n - 1
order = [(0, 1), (0, 2), (1, 2)] if n % 2 == 0 else [(0, 2), (0, 1), (1, 2)]
while moves < total:
    a, b = order[moves % 3]
    if pegs[b] and (not pegs[a] or pegs[b][-1] < pegs[a][-1]):
        a, b = b, a
    pegs[b].append(pegs[a].pop())
    moves += 1
print(moves, len(pegs[0]), len(pegs[1]), len(pegs[2]))
