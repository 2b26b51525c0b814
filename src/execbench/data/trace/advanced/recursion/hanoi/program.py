def move_tower(n, source, target, spare, moves):
    if n == 0:
        return
    move_tower(n - 1, source, spare, target, moves)
    moves.append((n, source, target))
    move_tower(n - 1, spare, target, source, moves)


def solve(n):
    moves = []
    move_tower(n, "A", "C", "B", moves)
    return len(moves), moves[:3]
