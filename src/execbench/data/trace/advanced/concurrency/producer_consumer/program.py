import threading
import queue

DONE = None


def producer(items, buffer):
    for item in items:
        buffer.put(item * item)
    buffer.put(DONE)


def consumer(buffer, results):
    while True:
        item = buffer.get()
        if item is DONE:
            break
        if item % 2 == 0:
            results.append(item // 2)
        else:
            results.append(item)


def main(items):
    buffer = queue.Queue(maxsize=2)
    results = []
    threads = [
        threading.Thread(target=producer, args=(items, buffer)),
        threading.Thread(target=consumer, args=(buffer, results)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(results), len(results)
