import threading
import queue

STOP = object()


def reader(words, out_q):
    for w in words:
        out_q.put(w)
    out_q.put(STOP)


def transformer(in_q, out_q):
    while True:
        item = in_q.get()
        if item is STOP:
            out_q.put(STOP)
            return
        out_q.put(item.upper())


def writer(in_q, sink):
    while True:
        item = in_q.get()
        if item is STOP:
            return
        sink.append(item + "!")


def main(words):
    q1 = queue.Queue(maxsize=2)
    q2 = queue.Queue(maxsize=2)
    sink = []
    stages = [
        threading.Thread(target=reader, args=(words, q1)),
        threading.Thread(target=transformer, args=(q1, q2)),
        threading.Thread(target=writer, args=(q2, sink)),
    ]
    for s in stages:
        s.start()
    for s in stages:
        s.join()
    return sink
