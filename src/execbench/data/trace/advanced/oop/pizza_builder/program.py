class Pizza:
    def __init__(self, size, crust, toppings, extras):
        self.size = size
        self.crust = crust
        self.toppings = toppings
        self.extras = extras

    def price(self):
        base = {"small": 8, "medium": 10, "large": 13}[self.size]
        if self.crust == "stuffed":
            base += 3
        return base + len(self.toppings) + 2 * len(self.extras)


class PizzaBuilder:
    def __init__(self):
        self._size = "medium"
        self._crust = "classic"
        self._toppings = []
        self._extras = []

    def size(self, size):
        self._size = size
        return self

    def crust(self, crust):
        self._crust = crust
        return self

    def topping(self, name):
        if name not in self._toppings:
            self._toppings.append(name)
        return self

    def extra(self, name):
        self._extras.append(name)
        return self

    def build(self):
        return Pizza(self._size, self._crust, list(self._toppings), list(self._extras))


def order(steps):
    builder = PizzaBuilder()
    for method, arg in steps:
        builder = getattr(builder, method)(arg)
    return builder.topping("cheese").build()


def main(orders):
    pizzas = [order(steps) for steps in orders]
    bill = 0
    for pizza in pizzas:
        bill += pizza.price()
    return len(pizzas), bill, max(len(p.toppings) for p in pizzas)
