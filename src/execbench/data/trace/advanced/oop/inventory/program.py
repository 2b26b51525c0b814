class Item:
    def __init__(self, name, quantity, price):
        self.name = name
        self.quantity = quantity
        self.price = price

    def value(self):
        return self.quantity * self.price

    def age(self, days):
        pass


class Perishable(Item):
    def __init__(self, name, quantity, price, shelf_life):
        super().__init__(name, quantity, price)
        self.days_left = shelf_life

    def age(self, days):
        self.days_left -= days
        if self.days_left <= 0:
            self.quantity = 0

    def value(self):
        if self.days_left <= 2:
            return super().value() // 2
        return super().value()


CATALOG = {"milk": (2, 4), "bread": (3, 3), "cheese": (6, 9), "apple": (1, 6)}


class Inventory:
    def __init__(self):
        self.items = {}
        self.sold = 0

    def add(self, name, quantity):
        if name in CATALOG:
            price, life = CATALOG[name]
            self.items[name] = Perishable(name, quantity, price, life)
        else:
            self.items[name] = Item(name, quantity, 10)

    def sell(self, name, quantity):
        item = self.items[name]
        count = min(quantity, item.quantity)
        item.quantity -= count
        self.sold += count * item.price
        return count == quantity

    def age(self, days):
        for item in self.items.values():
            item.age(days)

    def restock(self, threshold):
        for item in self.items.values():
            if item.quantity < threshold:
                item.quantity = threshold
                if isinstance(item, Perishable):
                    item.days_left = CATALOG[item.name][1]

    def worth(self):
        return sum(item.value() for item in self.items.values())


def main(actions):
    inv = Inventory()
    short = 0
    for action, name, amount in actions:
        if action == "add":
            inv.add(name, amount)
        elif action == "sell":
            if not inv.sell(name, amount):
                short += 1
        elif action == "age":
            inv.age(amount)
        else:
            inv.restock(amount)
    return inv.worth(), inv.sold, short
