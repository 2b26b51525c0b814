def sort_count(arr):
    if len(arr) <= 1:
        return arr, 0
    mid = len(arr) // 2
    left, a = sort_count(arr[:mid])
    right, b = sort_count(arr[mid:])
    merged = []
    count = a + b
    i = j = 0
    while i < len(left) and j < len(right):
        if left[i] <= right[j]:
            merged.append(left[i])
            i += 1
        else:
            merged.append(right[j])
            count += len(left) - i
            j += 1
    merged += left[i:] + right[j:]
    return merged, count


def count_inversions(arr):
    return sort_count(arr)[1]
