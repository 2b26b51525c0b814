class Parser:
    def __init__(self, text):
        self.text = text
        self.pos = 0

    def peek(self):
        if self.pos < len(self.text):
            return self.text[self.pos]
        return None

    def expr(self):
        value = self.term()
        while self.peek() in ("+", "-"):
            op = self.text[self.pos]
            self.pos += 1
            right = self.term()
            value = value + right if op == "+" else value - right
        return value

    def term(self):
        value = self.factor()
        while self.peek() in ("*", "/"):
            op = self.text[self.pos]
            self.pos += 1
            right = self.factor()
            value = value * right if op == "*" else value // right
        return value

    def factor(self):
        if self.peek() == "(":
            self.pos += 1
            value = self.expr()
            self.pos += 1
            return value
        start = self.pos
        while self.peek() is not None and self.peek().isdigit():
            self.pos += 1
        return int(self.text[start:self.pos])


def evaluate(text):
    return Parser(text).expr()
