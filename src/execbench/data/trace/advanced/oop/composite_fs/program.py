class Entry:
    def __init__(self, name):
        self.name = name
        self.parent = None

    def path(self):
        if self.parent is None:
            return "/" + self.name
        return self.parent.path() + "/" + self.name


class File(Entry):
    def __init__(self, name, size):
        super().__init__(name)
        self.size_bytes = size

    def size(self):
        return self.size_bytes

    def count_files(self):
        return 1


class Directory(Entry):
    def __init__(self, name):
        super().__init__(name)
        self.children = []

    def add(self, entry):
        entry.parent = self
        self.children.append(entry)
        return entry

    def size(self):
        return sum(child.size() for child in self.children)

    def count_files(self):
        total = 0
        for child in self.children:
            total += child.count_files()
        return total


def build(parent, specs):
    for spec in specs:
        if spec[0] == "file":
            parent.add(File(spec[1], spec[2]))
        else:
            sub = parent.add(Directory(spec[1]))
            build(sub, spec[2])


def main(specs):
    root = Directory("root")
    build(root, specs)
    deepest = root
    while isinstance(deepest, Directory) and deepest.children:
        deepest = deepest.children[-1]
    return root.size(), root.count_files(), deepest.path()
