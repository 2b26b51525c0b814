def split(n, max_part, prefix, out):
    if n == 0:
        out.append(tuple(prefix))
        return
    for part in range(min(n, max_part), 0, -1):
        prefix.append(part)
        split(n - part, part, prefix, out)
        prefix.pop()


def partitions(n):
    out = []
    split(n, n, [], out)
    return out
