class Vehicle:
    size = 1

    def __init__(self, plate):
        self.plate = plate

    def fee(self, hours):
        return 2 * hours


class Bike(Vehicle):
    def fee(self, hours):
        return hours


class Car(Vehicle):
    pass


class Truck(Vehicle):
    size = 2

    def fee(self, hours):
        return super().fee(hours) * 2 + 1


KINDS = {"bike": Bike, "car": Car, "truck": Truck}


class ParkingLot:
    def __init__(self, spots):
        self.spots = [None] * spots
        self.where = {}
        self.earned = 0

    def find_run(self, size):
        run = 0
        for i, occupant in enumerate(self.spots):
            run = run + 1 if occupant is None else 0
            if run == size:
                return i - size + 1
        return -1

    def park(self, vehicle):
        start = self.find_run(vehicle.size)
        if start < 0:
            return False
        for i in range(start, start + vehicle.size):
            self.spots[i] = vehicle
        self.where[vehicle.plate] = start
        return True

    def leave(self, plate, hours):
        if plate not in self.where:
            return 0
        start = self.where.pop(plate)
        vehicle = self.spots[start]
        for i in range(start, start + vehicle.size):
            self.spots[i] = None
        charge = vehicle.fee(hours)
        self.earned += charge
        return charge


def main(events):
    lot = ParkingLot(6)
    refused = []
    for hour, (action, kind, plate) in enumerate(events):
        if action == "park":
            if not lot.park(KINDS[kind](plate)):
                refused.append(plate)
        else:
            lot.leave(plate, hour + 1)
    return refused, lot.earned, sum(1 for s in lot.spots if s is None)
