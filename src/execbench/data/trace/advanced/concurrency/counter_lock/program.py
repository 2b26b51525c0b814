import threading


class Counter:
    def __init__(self):
        self.value = 0
        self.lock = threading.Lock()

    def increment(self, amount):
        with self.lock:
            self.value += amount


def worker(counter, times, amount):
    for _ in range(times):
        counter.increment(amount)


def main(num_threads, times):
    counter = Counter()
    threads = []
    for i in range(num_threads):
        t = threading.Thread(target=worker, args=(counter, times, i + 1))
        threads.append(t)
        t.start()
    for t in threads:
        t.join()
    return counter.value
