class Base:
    def __init__(self, log):
        log.append("Base")
        self.log = log

    def greet(self):
        return ["base"]


class Left(Base):
    def __init__(self, log):
        log.append("Left")
        super().__init__(log)

    def greet(self):
        return ["left"] + super().greet()


class Right(Base):
    def __init__(self, log):
        log.append("Right")
        super().__init__(log)

    def greet(self):
        return ["right"] + super().greet()


class Diamond(Left, Right):
    def __init__(self, log):
        log.append("Diamond")
        super().__init__(log)

    def greet(self):
        return ["diamond"] + super().greet()


CLASSES = {"A": Base, "B": Left, "C": Right, "D": Diamond}


def build(key):
    obj = CLASSES[key]([])
    return obj.log, obj.greet()


def main(keys):
    rows = []
    for key in keys:
        log, words = build(key)
        rows.append((key, len(log), "-".join(words)))
    return rows


def report():
    rows = main("ABCD")
    for key in "DCBA":
        log, words = build(key)
        if log[0] != words[0].capitalize():
            rows.append((key, "mismatch"))
    return rows
