from concurrent.futures import ThreadPoolExecutor


def square(x):
    return x * x


def classify(value):
    if value % 3 == 0:
        return "fizz"
    return "plain"


def main(numbers):
    with ThreadPoolExecutor(max_workers=3) as pool:
        squares = list(pool.map(square, numbers))
    counts = {"fizz": 0, "plain": 0}
    for value in squares:
        counts[classify(value)] += 1
    return squares[-1], counts
