def crossing(arr, lo, mid, hi):
    best_left = arr[mid]
    total = 0
    for i in range(mid, lo - 1, -1):
        total += arr[i]
        best_left = max(best_left, total)
    best_right = arr[mid + 1]
    total = 0
    for i in range(mid + 1, hi + 1):
        total += arr[i]
        best_right = max(best_right, total)
    return best_left + best_right


def best(arr, lo, hi):
    if lo == hi:
        return arr[lo]
    mid = (lo + hi) // 2
    left = best(arr, lo, mid)
    right = best(arr, mid + 1, hi)
    cross = crossing(arr, lo, mid, hi)
    return max(left, right, cross)


def max_subarray(arr):
    return best(arr, 0, len(arr) - 1)
