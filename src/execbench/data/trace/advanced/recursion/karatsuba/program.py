def split_at(x, m):
    high = x // 10 ** m
    low = x % 10 ** m
    return high, low


def multiply(x, y):
    if x < 10 or y < 10:
        return x * y
    m = max(len(str(x)), len(str(y))) // 2
    x_high, x_low = split_at(x, m)
    y_high, y_low = split_at(y, m)
    z0 = multiply(x_low, y_low)
    z2 = multiply(x_high, y_high)
    z1 = multiply(x_low + x_high, y_low + y_high) - z2 - z0
    return z2 * 10 ** (2 * m) + z1 * 10 ** m + z0
