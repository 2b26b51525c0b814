def fib_memo(n, memo):
    if n in memo:
        return memo[n]
    if n < 2:
        result = n
    else:
        result = fib_memo(n - 1, memo) + fib_memo(n - 2, memo)
    memo[n] = result
    return result


def fib_naive(n):
    if n < 2:
        return n
    return fib_naive(n - 1) + fib_naive(n - 2)


def fib(n):
    return fib_memo(n, {})


def compare(n):
    fast = fib(n)
    slow = fib_naive(n // 2 + 1)
    return fast, slow
