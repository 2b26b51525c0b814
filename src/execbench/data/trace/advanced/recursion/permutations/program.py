def backtrack(items, used, current, out):
    if len(current) == len(items):
        out.append(tuple(current))
        return
    for i in range(len(items)):
        if used[i]:
            continue
        used[i] = True
        current.append(items[i])
        backtrack(items, used, current, out)
        current.pop()
        used[i] = False


def permutations(items):
    out = []
    backtrack(items, [False] * len(items), [], out)
    return out
