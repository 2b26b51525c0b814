import threading
import queue


def is_prime(n):
    if n < 2:
        return False
    d = 2
    while d * d <= n:
        if n % d == 0:
            return False
        d += 1
    return True


def worker(tasks, found, lock):
    while True:
        n = tasks.get()
        if n is None:
            break
        if is_prime(n):
            with lock:
                found.append(n)


def main(numbers, num_workers):
    tasks = queue.Queue()
    for n in numbers:
        tasks.put(n)
    for _ in range(num_workers):
        tasks.put(None)
    found = []
    lock = threading.Lock()
    pool = [threading.Thread(target=worker, args=(tasks, found, lock)) for _ in range(num_workers)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return sorted(found)
