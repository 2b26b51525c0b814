RULES = {"A": "AB", "B": "A"}


def rewrite(symbol, depth):
    if depth == 0:
        return symbol
    result = ""
    for child in RULES[symbol]:
        result += rewrite(child, depth - 1)
    return result


def expand(axiom, depth):
    pieces = []
    for symbol in axiom:
        pieces.append(rewrite(symbol, depth))
    text = "".join(pieces)
    return len(text), text.count("A")
