def partition(arr, lo, hi):
    pivot = arr[hi]
    i = lo
    for j in range(lo, hi):
        if arr[j] < pivot:
            arr[i], arr[j] = arr[j], arr[i]
            i += 1
    arr[i], arr[hi] = arr[hi], arr[i]
    return i


def sort_range(arr, lo, hi):
    if lo >= hi:
        return
    p = partition(arr, lo, hi)
    sort_range(arr, lo, p - 1)
    sort_range(arr, p + 1, hi)


def quicksort(values):
    arr = list(values)
    sort_range(arr, 0, len(arr) - 1)
    return arr
