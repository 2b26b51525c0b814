MOVES = [(0, 1), (1, 0), (0, -1), (-1, 0)]


def walk(maze, r, c, visited, path):
    if r < 0 or c < 0 or r >= len(maze) or c >= len(maze[0]):
        return False
    if maze[r][c] == "#" or (r, c) in visited:
        return False
    visited.add((r, c))
    path.append((r, c))
    if maze[r][c] == "E":
        return True
    for dr, dc in MOVES:
        if walk(maze, r + dr, c + dc, visited, path):
            return True
    path.pop()
    return False


def solve(maze):
    path = []
    found = walk(maze, 0, 0, set(), path)
    return found, len(path)
