import threading


class Account:
    def __init__(self, number, balance):
        self.number = number
        self.balance = balance
        self.lock = threading.Lock()


class Bank:
    def __init__(self, count, initial):
        self.accounts = [Account(i, initial) for i in range(count)]

    def transfer(self, src, dst, amount):
        a, b = self.accounts[src], self.accounts[dst]
        first, second = (a, b) if a.number < b.number else (b, a)
        with first.lock:
            with second.lock:
                a.balance -= amount
                b.balance += amount

    def total(self):
        return sum(acc.balance for acc in self.accounts)


def teller(bank, transfers):
    for src, dst, amount in transfers:
        bank.transfer(src, dst, amount)


def main(batches):
    bank = Bank(4, 100)
    tellers = [threading.Thread(target=teller, args=(bank, batch)) for batch in batches]
    for t in tellers:
        t.start()
    for t in tellers:
        t.join()
    return bank.total(), [acc.balance for acc in bank.accounts]
