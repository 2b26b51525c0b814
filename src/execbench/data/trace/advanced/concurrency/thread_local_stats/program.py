import threading

context = threading.local()


def begin():
    context.count = 0
    context.total = 0
    context.peak = None


def record(value):
    context.count += 1
    context.total += value
    if context.peak is None or value > context.peak:
        context.peak = value


def summarize(values, out, slot):
    begin()
    for v in values:
        record(v)
    out[slot] = (context.count, context.total, context.peak)


def main(batches):
    out = [None] * len(batches)
    workers = [threading.Thread(target=summarize, args=(b, out, i)) for i, b in enumerate(batches)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return out
