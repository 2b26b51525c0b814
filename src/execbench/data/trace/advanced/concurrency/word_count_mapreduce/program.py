import threading


def map_chunk(lines, out, index):
    counts = {}
    for line in lines:
        for word in line.split():
            counts[word] = counts.get(word, 0) + 1
    out[index] = counts


def reduce_counts(partials):
    total = {}
    for part in partials:
        for word, n in part.items():
            total[word] = total.get(word, 0) + n
    return total


def main(lines, workers):
    size = (len(lines) + workers - 1) // workers
    chunks = [lines[i:i + size] for i in range(0, len(lines), size)]
    partials = [None] * len(chunks)
    threads = []
    for i, chunk in enumerate(chunks):
        threads.append(threading.Thread(target=map_chunk, args=(chunk, partials, i)))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    total = reduce_counts(partials)
    best = max(total, key=lambda w: (total[w], w))
    return best, total[best]
