def lps(text, i, j, memo):
    if i > j:
        return 0
    if i == j:
        return 1
    if (i, j) in memo:
        return memo[(i, j)]
    if text[i] == text[j]:
        result = 2 + lps(text, i + 1, j - 1, memo)
    else:
        result = max(lps(text, i + 1, j, memo), lps(text, i, j - 1, memo))
    memo[(i, j)] = result
    return result


def longest(text):
    return lps(text, 0, len(text) - 1, {})
