import threading


def merge(a, b):
    out = []
    i = j = 0
    while i < len(a) and j < len(b):
        if a[i] <= b[j]:
            out.append(a[i])
            i += 1
        else:
            out.append(b[j])
            j += 1
    return out + a[i:] + b[j:]


def merge_sort(items):
    if len(items) <= 1:
        return items
    mid = len(items) // 2
    return merge(merge_sort(items[:mid]), merge_sort(items[mid:]))


def sort_into(items, results, slot):
    results[slot] = merge_sort(items)


def main(items):
    mid = len(items) // 2
    halves = [items[:mid], items[mid:]]
    results = [None, None]
    workers = [threading.Thread(target=sort_into, args=(halves[k], results, k)) for k in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return merge(results[0], results[1])
