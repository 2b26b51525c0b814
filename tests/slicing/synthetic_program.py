import math
from functools import reduce

CONST = 7


def helper(a, b):
    t = a * 2
    u = b + 100
    return t + 1


class Pair:
    def __init__(self, a, b):
        self.a = a
        self.b = b

    def __eq__(self, other):
        return (self.a, self.b) == (other.a, other.b)


def make_pair(n):
    return Pair(n, n + 1)


def test_locals():
    x = 3
    y = 4
    z = x + 1
    w = y * 2
    assert z == 4


def test_control(flag=True):
    r = 0
    if flag:
        r = 10
    else:
        r = 20
    k = 5
    assert r == 10


def test_return():
    v = helper(1, 2)
    assert v == 3


def test_untraced():
    s = sorted([3, 1, 2])
    assert len(s) == 3


def test_dfi(n=2):
    a = CONST + n + math.floor(1.5) + len("ab") + reduce(max, [1, 2])
    assert a == 14


def test_masked():
    assert make_pair(1) == Pair(1, 2)


def test_mutation():
    items = []
    items.append(CONST)
    other = [0]
    items.append(1)
    assert items == [7, 1]


def test_loop(n=3):
    total = 0
    for i in range(n):
        if i == 1:
            continue
        total += helper(i, 0)
    assert total == 6
