import threading


def plain_sum(values):
    total = 0
    for v in values:
        total += v
    return total


def parallel_sum(values, depth, out, slot):
    if depth == 0 or len(values) < 2:
        out[slot] = plain_sum(values)
        return
    mid = len(values) // 2
    parts = [0, 0]
    left = threading.Thread(target=parallel_sum, args=(values[:mid], depth - 1, parts, 0))
    right = threading.Thread(target=parallel_sum, args=(values[mid:], depth - 1, parts, 1))
    left.start()
    right.start()
    left.join()
    right.join()
    out[slot] = parts[0] + parts[1]


def main(values, depth):
    out = [0]
    parallel_sum(values, depth, out, 0)
    return out[0]
