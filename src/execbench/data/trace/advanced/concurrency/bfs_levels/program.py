from concurrent.futures import ThreadPoolExecutor


def neighbours(graph, node):
    return sorted(graph[node])


def expand_level(graph, frontier):
    with ThreadPoolExecutor(max_workers=3) as pool:
        lists = list(pool.map(lambda n: neighbours(graph, n), frontier))
    return lists


def main(graph, start):
    distance = {start: 0}
    frontier = [start]
    level = 0
    while frontier:
        level += 1
        next_frontier = []
        for adj in expand_level(graph, frontier):
            for node in adj:
                if node not in distance:
                    distance[node] = level
                    next_frontier.append(node)
        frontier = next_frontier
    return distance
