class Handler:
    def __init__(self, name, limit, successor=None):
        self.name = name
        self.limit = limit
        self.successor = successor
        self.approved = []

    def can_handle(self, request):
        return request.amount <= self.limit

    def handle(self, request):
        if self.can_handle(request):
            self.approved.append(request.amount)
            request.approver = self.name
            return True
        if self.successor is None:
            request.approver = "rejected"
            return False
        return self.successor.handle(request)


class Clerk(Handler):
    def can_handle(self, request):
        return request.kind == "small" and super().can_handle(request)


class Manager(Handler):
    pass


class Board(Handler):
    def can_handle(self, request):
        if request.kind == "huge":
            return False
        return super().can_handle(request)


class Request:
    def __init__(self, kind, amount):
        self.kind = kind
        self.amount = amount
        self.approver = None


def main(requests):
    chain = Clerk("clerk", 100, Manager("manager", 1000, Board("board", 10000)))
    results = {}
    for kind, amount in requests:
        req = Request(kind, amount)
        chain.handle(req)
        results[req.approver] = results.get(req.approver, 0) + 1
    return results
