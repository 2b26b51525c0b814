import math
from abc import ABC, abstractmethod


class Shape(ABC):
    @abstractmethod
    def area(self):
        pass

    @abstractmethod
    def perimeter(self):
        pass

    def describe(self):
        return "%s(area=%.1f, perimeter=%.1f)" % (type(self).__name__, self.area(), self.perimeter())


class Circle(Shape):
    def __init__(self, radius):
        self.radius = radius

    def area(self):
        return math.pi * self.radius ** 2

    def perimeter(self):
        return 2 * math.pi * self.radius


class Rectangle(Shape):
    def __init__(self, width, height):
        self.width = width
        self.height = height

    def area(self):
        return self.width * self.height

    def perimeter(self):
        return 2 * (self.width + self.height)


class Square(Rectangle):
    def __init__(self, side):
        super().__init__(side, side)


class Triangle(Shape):
    def __init__(self, a, b, c):
        self.sides = (a, b, c)

    def perimeter(self):
        return sum(self.sides)

    def area(self):
        s = self.perimeter() / 2
        a, b, c = self.sides
        return math.sqrt(s * (s - a) * (s - b) * (s - c))


def make_shape(spec):
    kind = spec[0]
    if kind == "circle":
        return Circle(spec[1])
    if kind == "square":
        return Square(spec[1])
    if kind == "rect":
        return Rectangle(spec[1], spec[2])
    return Triangle(*spec[1:])


def main(specs):
    shapes = [make_shape(s) for s in specs]
    largest = max(shapes, key=lambda s: s.area())
    total = 0
    for shape in shapes:
        total += shape.perimeter()
    return largest.describe(), round(total, 2)
