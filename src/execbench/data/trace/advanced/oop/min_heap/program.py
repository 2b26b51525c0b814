class MinHeap:
    def __init__(self):
        self.data = []

    def __len__(self):
        return len(self.data)

    def push(self, value):
        self.data.append(value)
        self._sift_up(len(self.data) - 1)

    def pop(self):
        last = self.data.pop()
        if not self.data:
            return last
        top = self.data[0]
        self.data[0] = last
        self._sift_down(0)
        return top

    def _sift_up(self, i):
        while i > 0:
            parent = (i - 1) // 2
            if self.data[parent] <= self.data[i]:
                break
            self.data[parent], self.data[i] = self.data[i], self.data[parent]
            i = parent

    def _sift_down(self, i):
        n = len(self.data)
        while True:
            smallest = i
            for child in (2 * i + 1, 2 * i + 2):
                if child < n and self.data[child] < self.data[smallest]:
                    smallest = child
            if smallest == i:
                return
            self.data[smallest], self.data[i] = self.data[i], self.data[smallest]
            i = smallest


def main(values):
    heap = MinHeap()
    for v in values:
        heap.push(v)
    ordered = []
    while len(heap):
        ordered.append(heap.pop())
    return ordered
