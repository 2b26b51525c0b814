from collections import deque


class Graph:
    def __init__(self):
        self.adj = {}

    def add_edge(self, a, b):
        self.adj.setdefault(a, []).append(b)
        self.adj.setdefault(b, []).append(a)

    def neighbours(self, node):
        return sorted(self.adj.get(node, []))

    def bfs(self, start):
        order = [start]
        seen = {start}
        queue = deque([start])
        while queue:
            node = queue.popleft()
            for nxt in self.neighbours(node):
                if nxt not in seen:
                    seen.add(nxt)
                    order.append(nxt)
                    queue.append(nxt)
        return order

    def dfs(self, node, seen=None):
        if seen is None:
            seen = []
        seen.append(node)
        for nxt in self.neighbours(node):
            if nxt not in seen:
                self.dfs(nxt, seen)
        return seen


class WeightedGraph(Graph):
    def __init__(self):
        super().__init__()
        self.weights = {}

    def add_edge(self, a, b):
        super().add_edge(a, b)
        self.weights[(min(a, b), max(a, b))] = abs(a - b) + 1

    def total_weight(self):
        return sum(self.weights.values())


def main(edges, start):
    g = WeightedGraph()
    for a, b in edges:
        g.add_edge(a, b)
    return g.bfs(start), g.dfs(start), g.total_weight()
