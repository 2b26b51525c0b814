class Polynomial:
    def __init__(self, coeffs):
        coeffs = list(coeffs)
        while len(coeffs) > 1 and coeffs[-1] == 0:
            coeffs.pop()
        self.coeffs = coeffs

    def degree(self):
        return len(self.coeffs) - 1

    def __add__(self, other):
        size = max(len(self.coeffs), len(other.coeffs))
        result = []
        for i in range(size):
            a = self.coeffs[i] if i < len(self.coeffs) else 0
            b = other.coeffs[i] if i < len(other.coeffs) else 0
            result.append(a + b)
        return Polynomial(result)

    def __mul__(self, other):
        result = [0] * (len(self.coeffs) + len(other.coeffs) - 1)
        for i, a in enumerate(self.coeffs):
            for j, b in enumerate(other.coeffs):
                result[i + j] += a * b
        return Polynomial(result)

    def __call__(self, x):
        total = 0
        for c in reversed(self.coeffs):
            total = total * x + c
        return total

    def derivative(self):
        return Polynomial([i * c for i, c in enumerate(self.coeffs)][1:] or [0])


def main(p_coeffs, q_coeffs, x):
    p = Polynomial(p_coeffs)
    q = Polynomial(q_coeffs)
    s = p + q
    m = p * q
    return s(x), m(x), m.degree(), m.derivative()(x)
