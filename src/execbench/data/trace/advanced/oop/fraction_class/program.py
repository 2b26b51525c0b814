def gcd(a, b):
    while b:
        a, b = b, a % b
    return a


class Fraction:
    def __init__(self, num, den=1):
        if den < 0:
            num, den = -num, -den
        g = gcd(abs(num), den)
        self.num = num // g
        self.den = den // g

    def __add__(self, other):
        return Fraction(self.num * other.den + other.num * self.den, self.den * other.den)

    def __mul__(self, other):
        return Fraction(self.num * other.num, self.den * other.den)

    def __lt__(self, other):
        return self.num * other.den < other.num * self.den

    def __str__(self):
        if self.den == 1:
            return str(self.num)
        return "%d/%d" % (self.num, self.den)


def main(pairs):
    fracs = [Fraction(n, d) for n, d in pairs]
    total = Fraction(0)
    product = Fraction(1)
    for f in fracs:
        total = total + f
        product = product * f
    smallest = min(fracs)
    return str(total), str(product), str(smallest)
