import threading
import queue


class ThreadPool:
    def __init__(self, size):
        self.tasks = queue.Queue()
        self.results = {}
        self.lock = threading.Lock()
        self.workers = [threading.Thread(target=self._run) for _ in range(size)]
        for w in self.workers:
            w.start()

    def _run(self):
        while True:
            task = self.tasks.get()
            if task is None:
                return
            key, func, arg = task
            value = func(arg)
            with self.lock:
                self.results[key] = value

    def submit(self, key, func, arg):
        self.tasks.put((key, func, arg))

    def shutdown(self):
        for _ in self.workers:
            self.tasks.put(None)
        for w in self.workers:
            w.join()


def digits_sum(n):
    total = 0
    while n:
        total += n % 10
        n //= 10
    return total


def main(numbers, size):
    pool = ThreadPool(size)
    for i, n in enumerate(numbers):
        pool.submit(i, digits_sum, n * 37)
    pool.shutdown()
    return [pool.results[i] for i in range(len(numbers))]
