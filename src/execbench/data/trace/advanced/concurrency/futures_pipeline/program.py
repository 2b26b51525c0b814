from concurrent.futures import ThreadPoolExecutor


def collatz_steps(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def describe(n, steps):
    if steps > 10:
        return (n, steps, "long")
    return (n, steps, "short")


def main(numbers):
    with ThreadPoolExecutor(max_workers=2) as executor:
        futures = [executor.submit(collatz_steps, n) for n in numbers]
        steps = [f.result() for f in futures]
    report = []
    for n, s in zip(numbers, steps):
        report.append(describe(n, s))
    return report
