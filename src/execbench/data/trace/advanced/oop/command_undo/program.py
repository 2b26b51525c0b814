class Document:
    def __init__(self):
        self.text = ""


class Command:
    def __init__(self, doc):
        self.doc = doc
        self.before = None

    def execute(self):
        self.before = self.doc.text
        self.apply()

    def undo(self):
        self.doc.text = self.before


class TypeText(Command):
    def __init__(self, doc, text):
        super().__init__(doc)
        self.text = text

    def apply(self):
        self.doc.text += self.text


class DeleteText(Command):
    def __init__(self, doc, count):
        super().__init__(doc)
        self.count = count

    def apply(self):
        self.doc.text = self.doc.text[:-self.count]


class UpperCase(Command):
    def apply(self):
        self.doc.text = self.doc.text.upper()


class Editor:
    def __init__(self):
        self.doc = Document()
        self.done = []
        self.undone = []

    def run(self, command):
        command.execute()
        self.done.append(command)
        self.undone.clear()

    def undo(self):
        if self.done:
            command = self.done.pop()
            command.undo()
            self.undone.append(command)

    def redo(self):
        if self.undone:
            command = self.undone.pop()
            command.execute()
            self.done.append(command)


def main(actions):
    editor = Editor()
    for name, arg in actions:
        if name == "type":
            editor.run(TypeText(editor.doc, arg))
        elif name == "delete":
            editor.run(DeleteText(editor.doc, int(arg)))
        elif name == "upper":
            editor.run(UpperCase(editor.doc))
        elif name == "undo":
            editor.undo()
        else:
            editor.redo()
    return editor.doc.text
