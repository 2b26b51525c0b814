import threading


class Race:
    def __init__(self, runners):
        self.gate = threading.Event()
        self.laps = [0] * runners
        self.track = []

    def prepare(self, length):
        for i in range(length):
            self.track.append(i % 3 + 1)

    def run(self, lane):
        self.gate.wait()
        total = 0
        for segment in self.track:
            total += segment * (lane + 1)
        self.laps[lane] = total


def main(runners, factor=2):
    race = Race(runners)
    threads = [threading.Thread(target=race.run, args=(lane,)) for lane in range(runners)]
    for t in threads:
        t.start()
    race.prepare(runners * factor)
    race.gate.set()
    for t in threads:
        t.join()
    return race.laps
