import threading
import queue


class AccountActor:
    def __init__(self):
        self.inbox = queue.Queue()
        self.balance = 0
        self.handled = 0
        self.thread = threading.Thread(target=self.loop)

    def send(self, message):
        self.inbox.put(message)

    def handle(self, kind, amount):
        if kind == "deposit":
            self.balance += amount
        elif kind == "withdraw":
            self.balance -= amount
        else:
            self.balance += self.balance * amount // 100

    def loop(self):
        while True:
            message = self.inbox.get()
            if message is None:
                break
            self.handle(*message)
            self.handled += 1


def main(messages):
    actor = AccountActor()
    actor.thread.start()
    for m in messages:
        actor.send(m)
    actor.send(None)
    actor.thread.join()
    return actor.balance, actor.handled
