import threading


def f(x):
    return x * x + 1


def trapezoid(a, b, steps):
    h = (b - a) / steps
    total = (f(a) + f(b)) / 2
    for i in range(1, steps):
        total += f(a + i * h)
    return total * h


class Integrator:
    def __init__(self, a, b, pieces):
        self.bounds = []
        width = (b - a) / pieces
        for k in range(pieces):
            self.bounds.append((a + k * width, a + (k + 1) * width))
        self.partials = [0.0] * pieces

    def work(self, k, steps):
        lo, hi = self.bounds[k]
        self.partials[k] = trapezoid(lo, hi, steps)

    def run(self, steps):
        threads = [threading.Thread(target=self.work, args=(k, steps)) for k in range(len(self.bounds))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return sum(self.partials)


def main(pieces, steps):
    return round(Integrator(0.0, 3.0, pieces).run(steps), 6)
