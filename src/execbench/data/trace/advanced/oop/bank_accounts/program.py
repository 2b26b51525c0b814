class InsufficientFunds(Exception):
    pass


class Account:
    def __init__(self, owner, balance=0):
        self.owner = owner
        self.balance = balance
        self.history = []

    def deposit(self, amount):
        self.balance += amount
        self.history.append(("deposit", amount))

    def can_withdraw(self, amount):
        return amount <= self.balance

    def withdraw(self, amount):
        if not self.can_withdraw(amount):
            raise InsufficientFunds(self.owner)
        self.balance -= amount
        self.history.append(("withdraw", amount))

    def month_end(self):
        pass


class SavingsAccount(Account):
    rate = 2

    def month_end(self):
        interest = self.balance * self.rate // 100
        if interest > 0:
            self.deposit(interest)


class CheckingAccount(Account):
    def __init__(self, owner, balance=0, overdraft=100):
        super().__init__(owner, balance)
        self.overdraft = overdraft

    def can_withdraw(self, amount):
        return amount <= self.balance + self.overdraft

    def month_end(self):
        if self.balance < 0:
            self.balance -= 5
            self.history.append(("fee", 5))


def main(operations):
    accounts = {"save": SavingsAccount("ann", 100), "check": CheckingAccount("bob", 50)}
    failures = 0
    for name, op, amount in operations:
        account = accounts[name]
        try:
            if op == "deposit":
                account.deposit(amount)
            elif op == "withdraw":
                account.withdraw(amount)
            else:
                account.month_end()
        except InsufficientFunds:
            failures += 1
    return accounts["save"].balance, accounts["check"].balance, failures
