def parse_value(text, pos):
    if text[pos] == "[":
        return parse_list(text, pos + 1)
    start = pos
    while pos < len(text) and text[pos].isdigit():
        pos += 1
    return int(text[start:pos]), pos


def parse_list(text, pos):
    items = []
    if text[pos] == "]":
        return items, pos + 1
    while True:
        value, pos = parse_value(text, pos)
        items.append(value)
        if text[pos] == ",":
            pos += 1
        else:
            return items, pos + 1


def parse(text):
    value, end = parse_value(text, 0)
    return value
