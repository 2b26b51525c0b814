import threading


class SharedStore:
    def __init__(self):
        self.data = {}
        self.lock = threading.Lock()

    def write(self, key, value):
        with self.lock:
            self.data[key] = value

    def read(self, key):
        with self.lock:
            return self.data.get(key)


def writer(store, items):
    for key, value in items:
        store.write(key, value)


def reader(store, keys, results, slot):
    hits = 0
    for key in keys:
        value = store.read(key)
        if value is not None:
            hits += value
    results[slot] = hits


def main(initial, queries):
    store = SharedStore()
    pairs = list(initial.items())
    half = len(pairs) // 2
    writers = [threading.Thread(target=writer, args=(store, pairs[:half])),
               threading.Thread(target=writer, args=(store, pairs[half:]))]
    for w in writers:
        w.start()
    for w in writers:
        w.join()
    results = [0] * len(queries)
    readers = [threading.Thread(target=reader, args=(store, q, results, i)) for i, q in enumerate(queries)]
    for r in readers:
        r.start()
    for r in readers:
        r.join()
    return results
