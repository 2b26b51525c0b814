PRICES = {"cola": 2, "chips": 3, "gum": 1}


class State:
    def insert(self, machine, amount):
        machine.credit += amount
        machine.state = HasCredit()

    def select(self, machine, item):
        machine.log.append("insert coins first")

    def refund(self, machine):
        machine.log.append("nothing to refund")


class Idle(State):
    pass


class HasCredit(State):
    def select(self, machine, item):
        price = PRICES[item]
        if machine.credit < price:
            machine.log.append("need %d more" % (price - machine.credit))
            return
        machine.credit -= price
        machine.sold.append(item)
        if machine.credit == 0:
            machine.state = Idle()

    def refund(self, machine):
        machine.log.append("refund %d" % machine.credit)
        machine.credit = 0
        machine.state = Idle()


class VendingMachine:
    def __init__(self):
        self.state = Idle()
        self.credit = 0
        self.sold = []
        self.log = []

    def handle(self, action, arg):
        if action == "coin":
            self.state.insert(self, arg)
        elif action == "select":
            self.state.select(self, arg)
        else:
            self.state.refund(self)


def main(actions):
    machine = VendingMachine()
    for action, arg in actions:
        machine.handle(action, arg)
    return machine.sold, machine.credit, type(machine.state).__name__
