import threading


class Searcher(threading.Thread):
    def __init__(self, lines, offset, pattern):
        super().__init__()
        self.lines = lines
        self.offset = offset
        self.pattern = pattern
        self.matches = []

    def run(self):
        for i, line in enumerate(self.lines):
            if self.pattern in line:
                self.matches.append(self.offset + i)


def split_work(lines, parts):
    size = max(1, (len(lines) + parts - 1) // parts)
    return [(lines[i:i + size], i) for i in range(0, len(lines), size)]


def main(lines, pattern, parts):
    searchers = [Searcher(chunk, offset, pattern) for chunk, offset in split_work(lines, parts)]
    for s in searchers:
        s.start()
    for s in searchers:
        s.join()
    hits = []
    for s in searchers:
        hits.extend(s.matches)
    return hits
