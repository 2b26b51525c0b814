class Beverage:
    def cost(self):
        return 0

    def description(self):
        return "?"


class Coffee(Beverage):
    def cost(self):
        return 200

    def description(self):
        return "coffee"


class AddOn(Beverage):
    price = 0
    label = "?"

    def __init__(self, inner):
        self.inner = inner

    def cost(self):
        return self.inner.cost() + self.price

    def description(self):
        return self.inner.description() + " + " + self.label


class Milk(AddOn):
    price = 30
    label = "milk"


class Sugar(AddOn):
    price = 5
    label = "sugar"


class Syrup(AddOn):
    price = 45
    label = "syrup"

    def cost(self):
        base = super().cost()
        if base > 300:
            return base - 10
        return base


class Cream(Milk):
    price = 50
    label = "cream"


EXTRAS = {"milk": Milk, "sugar": Sugar, "syrup": Syrup, "cream": Cream}


def make_drink(extras):
    drink = Coffee()
    for name in extras:
        if name in EXTRAS:
            drink = EXTRAS[name](drink)
    return drink


def main(orders):
    receipt = []
    total = 0
    for extras in orders:
        drink = make_drink(extras)
        price = drink.cost()
        total += price
        receipt.append((drink.description(), price))
    return total, receipt
