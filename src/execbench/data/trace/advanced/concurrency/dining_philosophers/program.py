import threading


class Table:
    def __init__(self, seats):
        self.forks = [threading.Lock() for _ in range(seats)]
        self.meals = [0] * seats

    def forks_for(self, seat):
        left = seat
        right = (seat + 1) % len(self.forks)
        return min(left, right), max(left, right)


def philosopher(table, seat, rounds):
    low, high = table.forks_for(seat)
    for _ in range(rounds):
        with table.forks[low]:
            with table.forks[high]:
                table.meals[seat] += 1


def main(seats, rounds):
    table = Table(seats)
    diners = []
    for seat in range(seats):
        diners.append(threading.Thread(target=philosopher, args=(table, seat, rounds)))
    for d in diners:
        d.start()
    for d in diners:
        d.join()
    return table.meals
