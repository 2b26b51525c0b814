class Passenger:
    def __init__(self, origin, destination):
        self.origin = origin
        self.destination = destination

    def direction(self):
        return 1 if self.destination > self.origin else -1


class Elevator:
    def __init__(self):
        self.floor = 0
        self.riders = []
        self.travelled = 0
        self.delivered = 0

    def move_to(self, floor):
        step = 1 if floor > self.floor else -1
        while self.floor != floor:
            self.floor += step
            self.travelled += 1
            self.unload()

    def unload(self):
        staying = []
        for p in self.riders:
            if p.destination == self.floor:
                self.delivered += 1
            else:
                staying.append(p)
        self.riders = staying

    def board(self, passenger):
        self.riders.append(passenger)


class Controller:
    def __init__(self, elevator):
        self.elevator = elevator
        self.waiting = []

    def call(self, origin, destination):
        if origin != destination:
            self.waiting.append(Passenger(origin, destination))

    def run(self):
        while self.waiting:
            nxt = self.waiting.pop(0)
            self.elevator.move_to(nxt.origin)
            self.elevator.board(nxt)
            self.elevator.move_to(nxt.destination)


def main(requests):
    lift = Elevator()
    controller = Controller(lift)
    for origin, destination in requests:
        controller.call(origin, destination)
    controller.run()
    return lift.floor, lift.travelled, lift.delivered
