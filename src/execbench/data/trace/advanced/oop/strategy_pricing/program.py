class PricingStrategy:
    def discount(self, items):
        return 0


class PercentOff(PricingStrategy):
    def __init__(self, percent):
        self.percent = percent

    def discount(self, items):
        return sum(price for _, price in items) * self.percent // 100


class BulkDeal(PricingStrategy):
    def __init__(self, every):
        self.every = every

    def discount(self, items):
        prices = sorted(price for _, price in items)
        free = len(prices) // self.every
        return sum(prices[:free])


class BestOf(PricingStrategy):
    def __init__(self, options):
        self.options = options

    def discount(self, items):
        best = 0
        for option in self.options:
            amount = option.discount(items)
            if amount > best:
                best = amount
        return best


class Cart:
    def __init__(self, strategy):
        self.items = []
        self.strategy = strategy

    def add(self, name, price):
        self.items.append((name, price))

    def subtotal(self):
        total = 0
        for _, price in self.items:
            total += price
        return total

    def total(self):
        return self.subtotal() - self.strategy.discount(self.items)


def make_strategy(name):
    if name == "percent":
        return PercentOff(10)
    if name == "bulk":
        return BulkDeal(3)
    if name == "best":
        return BestOf([PercentOff(10), BulkDeal(3), PercentOff(15)])
    return PricingStrategy()


def main(items, strategy_name):
    cart = Cart(make_strategy(strategy_name))
    for name, price in items:
        cart.add(name, price)
    return cart.subtotal(), cart.total()
