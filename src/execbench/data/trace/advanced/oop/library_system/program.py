class LibraryError(Exception):
    pass


class Book:
    def __init__(self, title, copies):
        self.title = title
        self.copies = copies
        self.waitlist = []

    def available(self):
        return self.copies > 0


class Member:
    limit = 2

    def __init__(self, name):
        self.name = name
        self.loans = []

    def can_borrow(self):
        return len(self.loans) < self.limit


class Child(Member):
    limit = 1


class Premium(Member):
    limit = 3


class Library:
    def __init__(self):
        self.books = {}
        self.members = {}
        self.events = []

    def add_book(self, title, copies):
        self.books[title] = Book(title, copies)

    def join(self, member):
        self.members[member.name] = member

    def lend(self, name, title):
        member, book = self.members[name], self.books[title]
        if not member.can_borrow():
            raise LibraryError("limit reached")
        if not book.available():
            book.waitlist.append(name)
            raise LibraryError("no copies")
        book.copies -= 1
        member.loans.append(title)

    def give_back(self, name, title):
        member, book = self.members[name], self.books[title]
        if title not in member.loans:
            raise LibraryError("not borrowed")
        member.loans.remove(title)
        book.copies += 1
        if book.waitlist:
            self.events.append("notify " + book.waitlist.pop(0))


def main(actions):
    lib = Library()
    for title, copies in [("dune", 1), ("emma", 2), ("ulysses", 1), ("odyssey", 1)]:
        lib.add_book(title, copies)
    lib.join(Premium("ann"))
    lib.join(Member("bob"))
    lib.join(Child("kid"))
    errors = []
    for action, name, title in actions:
        try:
            if action == "lend":
                lib.lend(name, title)
            else:
                lib.give_back(name, title)
        except LibraryError as err:
            errors.append(str(err))
    return errors, lib.events
