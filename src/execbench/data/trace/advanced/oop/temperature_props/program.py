class Temperature:
    ABSOLUTE_ZERO = -273.15

    def __init__(self, celsius=0.0):
        self._celsius = 0.0
        self.celsius = celsius

    @property
    def celsius(self):
        return self._celsius

    @celsius.setter
    def celsius(self, value):
        if value < self.ABSOLUTE_ZERO:
            raise ValueError("below absolute zero")
        self._celsius = value

    @property
    def fahrenheit(self):
        return self._celsius * 9 / 5 + 32

    @fahrenheit.setter
    def fahrenheit(self, value):
        self.celsius = (value - 32) * 5 / 9


class Thermostat:
    def __init__(self, target):
        self.room = Temperature(18)
        self.target = Temperature(target)
        self.rejected = 0

    def read(self, celsius):
        try:
            self.room.celsius = celsius
        except ValueError:
            self.rejected += 1
            return "invalid"
        if self.room.celsius < self.target.celsius - 1:
            return "heat"
        if self.room.celsius > self.target.celsius + 1:
            return "cool"
        return "idle"


def main(readings):
    stat = Thermostat(21)
    actions = [stat.read(r) for r in readings]
    stat.target.fahrenheit = 75
    return actions, stat.rejected, round(stat.target.celsius, 2)
