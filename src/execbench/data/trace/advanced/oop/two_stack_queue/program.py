class Stack:
    def __init__(self):
        self.items = []

    def push(self, item):
        self.items.append(item)

    def pop(self):
        return self.items.pop()

    def is_empty(self):
        return len(self.items) == 0


class TwoStackQueue:
    def __init__(self):
        self.inbox = Stack()
        self.outbox = Stack()

    def enqueue(self, item):
        self.inbox.push(item)

    def _shift(self):
        if self.outbox.is_empty():
            while not self.inbox.is_empty():
                self.outbox.push(self.inbox.pop())

    def dequeue(self):
        self._shift()
        if self.outbox.is_empty():
            return None
        return self.outbox.pop()

    def peek(self):
        self._shift()
        if self.outbox.is_empty():
            return None
        return self.outbox.items[-1]


def main(ops):
    q = TwoStackQueue()
    out = []
    for op, value in ops:
        if op == "push":
            q.enqueue(value)
        elif op == "pop":
            out.append(q.dequeue())
        else:
            out.append(q.peek())
    return out
