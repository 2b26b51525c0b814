class ListNode:
    def __init__(self, value, next_node=None):
        self.value = value
        self.next = next_node


class LinkedList:
    def __init__(self):
        self.head = None
        self.size = 0

    def push_back(self, value):
        node = ListNode(value)
        if self.head is None:
            self.head = node
        else:
            current = self.head
            while current.next is not None:
                current = current.next
            current.next = node
        self.size += 1

    def __iter__(self):
        current = self.head
        while current is not None:
            yield current.value
            current = current.next

    def __len__(self):
        return self.size

    def reverse(self):
        previous = None
        current = self.head
        while current is not None:
            current.next, previous, current = previous, current, current.next
        self.head = previous

    def remove(self, value):
        if self.head is not None and self.head.value == value:
            self.head = self.head.next
            self.size -= 1
            return True
        current = self.head
        while current is not None and current.next is not None:
            if current.next.value == value:
                current.next = current.next.next
                self.size -= 1
                return True
            current = current.next
        return False


def main(values, target):
    items = LinkedList()
    for v in values[:len(values) // 2 + 1]:
        items.push_back(v)
    items.reverse()
    removed = items.remove(target)
    return list(items), len(items), removed
