import threading


class Simulation:
    def __init__(self, size, phases):
        self.cells = list(range(size))
        self.phases = phases
        self.barrier = threading.Barrier(size)
        self.history = []

    def step_cell(self, idx, phase):
        self.cells[idx] = self.cells[idx] * 2 + phase

    def worker(self, idx):
        for phase in range(self.phases):
            self.step_cell(idx, phase)
            if self.barrier.wait() == 0:
                self.history.append(sum(self.cells))
            self.barrier.wait()


def main(size, phases):
    sim = Simulation(size, phases)
    threads = [threading.Thread(target=sim.worker, args=(i,)) for i in range(size)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sim.history
