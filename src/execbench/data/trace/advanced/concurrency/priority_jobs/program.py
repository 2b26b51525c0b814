import threading
import queue

LAST = 10 ** 9


class Scheduler:
    def __init__(self, workers):
        self.jobs = queue.PriorityQueue()
        self.workers = workers
        self.lock = threading.Lock()
        self.cost = 0
        self.seq = 0

    def submit(self, priority, payload):
        self.jobs.put((priority, self.seq, payload))
        self.seq += 1

    def close(self):
        for _ in range(self.workers):
            self.submit(LAST, None)

    def execute(self, payload):
        units = 0
        for ch in payload:
            units += 2 if ch in "aeiou" else 1
        return units

    def work(self):
        while True:
            priority, seq, payload = self.jobs.get()
            if payload is None:
                return
            units = self.execute(payload)
            with self.lock:
                self.cost += units * (priority + 1)


def main(jobs, workers):
    sched = Scheduler(workers)
    for priority, payload in jobs:
        sched.submit(priority, payload)
    sched.close()
    threads = [threading.Thread(target=sched.work) for _ in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sched.cost
