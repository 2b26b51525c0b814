import math


class Vector:
    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __add__(self, other):
        return Vector(self.x + other.x, self.y + other.y)

    def __sub__(self, other):
        return Vector(self.x - other.x, self.y - other.y)

    def __mul__(self, k):
        return Vector(self.x * k, self.y * k)

    __rmul__ = __mul__

    def dot(self, other):
        return self.x * other.x + self.y * other.y

    def __abs__(self):
        return math.hypot(self.x, self.y)

    def __eq__(self, other):
        return self.x == other.x and self.y == other.y

    def __repr__(self):
        return "Vector(%s, %s)" % (self.x, self.y)


def centroid(points):
    total = Vector(0, 0)
    for p in points:
        total = total + p
    return total * (1 / len(points))


def main(coords):
    points = [Vector(x, y) for x, y in coords]
    center = centroid(points)
    far = points[0]
    for p in points[1:]:
        if abs(p - center) > abs(far - center):
            far = p
    same = sum(1 for p in points if p == 2 * Vector(1, 0))
    return repr(far), round(abs(center), 3), same
