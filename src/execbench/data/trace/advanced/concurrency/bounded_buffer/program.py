import threading


class BoundedBuffer:
    def __init__(self, capacity):
        self.items = [None] * capacity
        self.head = 0
        self.tail = 0
        self.free = threading.Semaphore(capacity)
        self.filled = threading.Semaphore(0)
        self.lock = threading.Lock()

    def put(self, item):
        self.free.acquire()
        with self.lock:
            self.items[self.tail] = item
            self.tail = (self.tail + 1) % len(self.items)
        self.filled.release()

    def take(self):
        self.filled.acquire()
        with self.lock:
            item = self.items[self.head]
            self.head = (self.head + 1) % len(self.items)
        self.free.release()
        return item


def produce(buf, values):
    for v in values:
        buf.put(v)


def consume(buf, count, out):
    for _ in range(count):
        out.append(buf.take() * 10)


def main(capacity, values):
    buf = BoundedBuffer(capacity)
    out = []
    p = threading.Thread(target=produce, args=(buf, values))
    c = threading.Thread(target=consume, args=(buf, len(values), out))
    p.start()
    c.start()
    p.join()
    c.join()
    return out
