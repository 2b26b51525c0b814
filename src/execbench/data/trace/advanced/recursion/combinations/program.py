def combine(items, k, start, current, out):
    if len(current) == k:
        out.append(list(current))
        return
    needed = k - len(current)
    for i in range(start, len(items) - needed + 1):
        current.append(items[i])
        combine(items, k, i + 1, current, out)
        current.pop()


def choose(items, k):
    out = []
    combine(items, k, 0, [], out)
    return out
