def breaks(text, start, words, memo):
    if start == len(text):
        return [[]]
    if start in memo:
        return memo[start]
    results = []
    for word in words:
        if text.startswith(word, start):
            for rest in breaks(text, start + len(word), words, memo):
                results.append([word] + rest)
    memo[start] = results
    return results


def segment(text, words):
    found = breaks(text, 0, words, {})
    return [" ".join(parts) for parts in found]
