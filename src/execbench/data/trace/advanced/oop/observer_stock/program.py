class Subject:
    def __init__(self):
        self.observers = []

    def attach(self, observer):
        self.observers.append(observer)

    def notify(self, *args):
        for observer in self.observers:
            observer.update(self, *args)


class Stock(Subject):
    def __init__(self, symbol, price):
        super().__init__()
        self.symbol = symbol
        self.price = price

    def set_price(self, price):
        old = self.price
        self.price = price
        if price != old:
            self.notify(old, price)


class Logger:
    def __init__(self):
        self.lines = []

    def update(self, stock, old, new):
        self.lines.append("%s %d->%d" % (stock.symbol, old, new))


class Alert:
    def __init__(self, threshold):
        self.threshold = threshold
        self.triggered = []

    def update(self, stock, old, new):
        change = (new - old) * 100 // old
        if abs(change) >= self.threshold:
            self.triggered.append((stock.symbol, change))


class Portfolio:
    def __init__(self, holdings):
        self.holdings = holdings
        self.value = 0

    def update(self, stock, old, new):
        self.value += self.holdings.get(stock.symbol, 0) * (new - old)


def main(ticks):
    stocks = {"ACME": Stock("ACME", 10), "BOLT": Stock("BOLT", 5)}
    log, alert = Logger(), Alert(30)
    folio = Portfolio({"ACME": 3, "BOLT": 10})
    for stock in stocks.values():
        stock.attach(log)
        stock.attach(alert)
        stock.attach(folio)
    for symbol, price in ticks:
        stocks[symbol].set_price(price)
    return len(log.lines), alert.triggered, folio.value
