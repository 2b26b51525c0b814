def female(n):
    if n == 0:
        return 1
    return n - male(female(n - 1))


def male(n):
    if n == 0:
        return 0
    return n - female(male(n - 1))


def sequences(n):
    fs = []
    ms = []
    for i in range(n):
        fs.append(female(i))
        ms.append(male(i))
    return fs, ms
