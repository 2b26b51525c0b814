def solve(a, b, i, j, memo):
    if (i, j) in memo:
        return memo[(i, j)]
    if i == len(a):
        result = len(b) - j
    elif j == len(b):
        result = len(a) - i
    elif a[i] == b[j]:
        result = solve(a, b, i + 1, j + 1, memo)
    else:
        insert = solve(a, b, i, j + 1, memo)
        delete = solve(a, b, i + 1, j, memo)
        replace = solve(a, b, i + 1, j + 1, memo)
        result = 1 + min(insert, delete, replace)
    memo[(i, j)] = result
    return result


def distance(a, b):
    return solve(a, b, 0, 0, {})
