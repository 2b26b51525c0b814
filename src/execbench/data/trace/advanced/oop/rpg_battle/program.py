class Character:
    def __init__(self, name, hp, power):
        self.name = name
        self.hp = hp
        self.power = power
        self.turns = 0

    def alive(self):
        return self.hp > 0

    def attack(self, other):
        self.turns += 1
        other.take_damage(self.damage())

    def damage(self):
        return self.power

    def take_damage(self, amount):
        self.hp = max(0, self.hp - amount)


class Warrior(Character):
    def __init__(self, name):
        super().__init__(name, 60, 6)
        self.armor = 2

    def take_damage(self, amount):
        super().take_damage(max(1, amount - self.armor))


class Mage(Character):
    def __init__(self, name):
        super().__init__(name, 25, 4)
        self.mana = 10

    def damage(self):
        if self.mana >= 4:
            self.mana -= 4
            return self.power * 3
        self.mana += 2
        return self.power


class Rogue(Character):
    def __init__(self, name):
        super().__init__(name, 30, 5)

    def damage(self):
        if self.turns % 3 == 0:
            return self.power * 2
        return self.power


class Goblin(Character):
    def __init__(self, name):
        super().__init__(name, 12, 3)


CLASSES = {"warrior": Warrior, "mage": Mage, "rogue": Rogue, "goblin": Goblin}


def main(first, second, max_rounds):
    a = CLASSES[first]("A")
    b = CLASSES[second]("B")
    rounds = 0
    while rounds < max_rounds and a.alive() and b.alive():
        rounds += 1
        a.attack(b)
        if b.alive():
            b.attack(a)
    winner = a.name if a.hp >= b.hp else b.name
    return rounds, a.hp, b.hp, winner
