class Animal:
    legs = 4

    def __init__(self, name):
        self.name = name
        self.fed = 0

    def sound(self):
        return "..."

    def food(self):
        return "generic"

    def feed(self):
        self.fed += 1
        return self.food()

    def speak(self):
        return self.name + " says " + self.sound()


class Dog(Animal):
    def sound(self):
        return "woof"

    def food(self):
        return "meat"


class Cat(Animal):
    def sound(self):
        return "meow"

    def food(self):
        return "fish"


class Lion(Cat):
    def sound(self):
        return "roar"

    def food(self):
        return "meat"


class Snake(Animal):
    legs = 0

    def sound(self):
        return "hiss"


class Parrot(Animal):
    legs = 2

    def sound(self):
        return "squawk " + super().sound()

    def food(self):
        return "seeds"


KINDS = {"dog": Dog, "cat": Cat, "lion": Lion, "snake": Snake, "parrot": Parrot}


class Zoo:
    def __init__(self):
        self.animals = []
        self.pantry = {}

    def admit(self, kind, index):
        animal = KINDS[kind](kind + str(index))
        self.animals.append(animal)

    def feeding_time(self):
        for animal in self.animals:
            food = animal.feed()
            self.pantry[food] = self.pantry.get(food, 0) + 1

    def total_legs(self):
        return sum(a.legs for a in self.animals)


def main(kinds):
    zoo = Zoo()
    for i, kind in enumerate(kinds):
        zoo.admit(kind, i)
    zoo.feeding_time()
    chorus = [a.speak() for a in zoo.animals[:3]]
    return chorus, zoo.pantry, zoo.total_legs()
