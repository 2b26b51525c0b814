import threading


class CountDownLatch:
    def __init__(self, count):
        self.count = count
        self.lock = threading.Lock()
        self.done = threading.Event()

    def count_down(self):
        with self.lock:
            self.count -= 1
            if self.count == 0:
                self.done.set()

    def wait(self):
        self.done.wait()


def loader(name, size, latch, cache):
    cache[name] = [i * i for i in range(size)]
    latch.count_down()


def main(services, scale=3):
    latch = CountDownLatch(services)
    cache = {}
    threads = []
    for k in range(services):
        name = "svc%d" % k
        threads.append(threading.Thread(target=loader, args=(name, k * scale + 1, latch, cache)))
    for t in threads:
        t.start()
    latch.wait()
    ready = sum(len(cache["svc%d" % k]) for k in range(services))
    for t in threads:
        t.join()
    return ready
