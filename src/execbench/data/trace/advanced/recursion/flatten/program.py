def flatten(nested):
    flat = []
    for item in nested:
        if isinstance(item, list):
            flat.extend(flatten(item))
        else:
            flat.append(item)
    return flat


def depth(nested):
    if not isinstance(nested, list):
        return 0
    best = 0
    for item in nested:
        best = max(best, depth(item))
    return best + 1


def summarize(nested):
    values = flatten(nested)
    return len(values), sum(values), depth(nested)
