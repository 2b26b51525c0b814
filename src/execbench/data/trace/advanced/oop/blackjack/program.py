class Card:
    def __init__(self, rank):
        self.rank = rank

    def value(self):
        return self.rank


class Ace(Card):
    def __init__(self):
        super().__init__(11)

    def value(self):
        return 11


class Deck:
    def __init__(self, ranks):
        self.cards = [Ace() if r == 11 else Card(r) for r in ranks]
        self.position = 0

    def draw(self):
        card = self.cards[self.position]
        self.position += 1
        return card


class Hand:
    def __init__(self):
        self.cards = []

    def add(self, card):
        self.cards.append(card)

    def score(self):
        total = sum(c.value() for c in self.cards)
        aces = sum(1 for c in self.cards if isinstance(c, Ace))
        while total > 21 and aces:
            total -= 10
            aces -= 1
        return total


class Player:
    def __init__(self, name, stop_at):
        self.name = name
        self.stop_at = stop_at
        self.hand = Hand()

    def play(self, deck):
        self.hand.add(deck.draw())
        self.hand.add(deck.draw())
        while self.hand.score() < self.stop_at and deck.position < len(deck.cards):
            self.hand.add(deck.draw())
        return self.hand.score()


class Dealer(Player):
    def __init__(self):
        super().__init__("dealer", 17)


def main(player_cards, dealer_cards):
    player = Player("you", 16)
    dealer = Dealer()
    mine = player.play(Deck(player_cards))
    theirs = dealer.play(Deck(dealer_cards))
    if mine > 21:
        return "bust", mine, theirs
    if theirs > 21 or mine > theirs:
        return "win", mine, theirs
    return ("push" if mine == theirs else "lose"), mine, theirs
