import threading


class Rally:
    def __init__(self):
        self.ping_turn = threading.Semaphore(1)
        self.pong_turn = threading.Semaphore(0)
        self.log = []

    def ping(self, hits):
        for i in range(hits):
            self.ping_turn.acquire()
            self.log.append("ping")
            self.pong_turn.release()

    def pong(self, hits):
        for i in range(hits):
            self.pong_turn.acquire()
            self.log.append("pong")
            self.ping_turn.release()


def main(hits):
    rally = Rally()
    a = threading.Thread(target=rally.ping, args=(hits,))
    b = threading.Thread(target=rally.pong, args=(hits,))
    a.start()
    b.start()
    a.join()
    b.join()
    return len(rally.log), rally.log[:4]
