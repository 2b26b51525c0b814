def build(open_left, close_left, prefix, out):
    if open_left == 0 and close_left == 0:
        out.append(prefix)
        return
    if open_left > 0:
        build(open_left - 1, close_left, prefix + "(", out)
    if close_left > open_left:
        build(open_left, close_left - 1, prefix + ")", out)


def generate(pairs):
    out = []
    build(pairs, pairs, "", out)
    return out
