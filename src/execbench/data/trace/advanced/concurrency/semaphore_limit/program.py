import threading


class ConnectionPool:
    def __init__(self, size):
        self.slots = threading.Semaphore(size)
        self.lock = threading.Lock()
        self.served = 0

    def request(self, payload):
        with self.slots:
            checksum = 0
            for ch in payload:
                checksum = (checksum * 31 + ord(ch)) % 1000
            with self.lock:
                self.served += 1
            return checksum


def client(pool, payload, results, slot):
    results[slot] = pool.request(payload)


def main(payloads):
    pool = ConnectionPool(2)
    results = [None] * len(payloads)
    clients = []
    for i, p in enumerate(payloads):
        clients.append(threading.Thread(target=client, args=(pool, p, results, i)))
    for c in clients:
        c.start()
    for c in clients:
        c.join()
    return pool.served, results
