class Countdown:
    def __init__(self, start):
        self.current = start

    def __iter__(self):
        return self

    def __next__(self):
        if self.current <= 0:
            raise StopIteration
        value = self.current
        self.current -= 1
        return value


class EvenOnly:
    def __init__(self, source):
        self.source = iter(source)

    def __iter__(self):
        return self

    def __next__(self):
        while True:
            value = next(self.source)
            if value % 2 == 0:
                return value


class Window:
    def __init__(self, items, size):
        self.items = list(items)
        self.size = size

    def __iter__(self):
        for i in range(len(self.items) - self.size + 1):
            yield tuple(self.items[i:i + self.size])


def main(n):
    evens = EvenOnly(Countdown(n))
    pairs = list(Window(evens, 2))
    return pairs, sum(a - b for a, b in pairs)
