import threading


def bucket_of(value):
    if value < 3:
        return "low"
    if value < 7:
        return "mid"
    return "high"


def local_histogram(values, out, slot):
    hist = {"low": 0, "mid": 0, "high": 0}
    for v in values:
        hist[bucket_of(v)] += 1
    out[slot] = hist


def merge(parts):
    total = {"low": 0, "mid": 0, "high": 0}
    for part in parts:
        for key in total:
            total[key] += part[key]
    return total


def main(values, workers):
    out = [None] * workers
    threads = []
    for w in range(workers):
        threads.append(threading.Thread(target=local_histogram, args=(values[w::workers], out, w)))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return merge(out)
