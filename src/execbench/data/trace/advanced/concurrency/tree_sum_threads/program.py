import threading


def build(depth, start=1):
    if depth == 0:
        return ("leaf", start)
    return ("node", build(depth - 1, start * 2), build(depth - 1, start * 2 + 1))


def tree_sum(tree):
    if tree[0] == "leaf":
        return tree[1]
    return tree_sum(tree[1]) + tree_sum(tree[2])


def sum_into(tree, results, index):
    results[index] = tree_sum(tree)


def main(tree):
    if tree[0] == "leaf":
        return tree[1]
    results = [0, 0]
    left = threading.Thread(target=sum_into, args=(tree[1], results, 0))
    right = threading.Thread(target=sum_into, args=(tree[2], results, 1))
    left.start()
    right.start()
    left.join()
    right.join()
    return results[0] + results[1]
