import threading


def partial_sum(data, start, stop, results, slot):
    total = 0
    for i in range(start, stop):
        total += data[i]
    results[slot] = total


def main(data, parts):
    step = len(data) // parts
    results = [0] * parts
    threads = []
    for p in range(parts):
        start = p * step
        stop = len(data) if p == parts - 1 else start + step
        t = threading.Thread(target=partial_sum, args=(data, start, stop, results, p))
        threads.append(t)
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(results), results
