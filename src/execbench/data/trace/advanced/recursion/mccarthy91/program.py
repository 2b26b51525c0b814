def m91(n):
    if n > 100:
        return n - 10
    return m91(m91(n + 11))


def table(values):
    results = {}
    for v in values:
        results[v] = m91(v)
    return results
