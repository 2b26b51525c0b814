class Node:
    def accept(self, visitor):
        method = getattr(visitor, "visit_" + type(self).__name__)
        return method(self)


class Num(Node):
    def __init__(self, value):
        self.value = value


class BinOp(Node):
    symbol = "?"

    def __init__(self, left, right):
        self.left = left
        self.right = right


class Add(BinOp):
    symbol = "+"


class Sub(BinOp):
    symbol = "-"


class Mul(BinOp):
    symbol = "*"


class Evaluator:
    def visit_Num(self, node):
        return node.value

    def visit_Add(self, node):
        return node.left.accept(self) + node.right.accept(self)

    def visit_Sub(self, node):
        return node.left.accept(self) - node.right.accept(self)

    def visit_Mul(self, node):
        return node.left.accept(self) * node.right.accept(self)


class Printer:
    def visit_Num(self, node):
        return str(node.value)

    def binary(self, node):
        return "(" + node.left.accept(self) + " " + node.symbol + " " + node.right.accept(self) + ")"

    visit_Add = visit_Sub = visit_Mul = binary


def main(tree):
    text = tree.accept(Printer())
    value = tree.accept(Evaluator())
    return text + " = " + str(value)
