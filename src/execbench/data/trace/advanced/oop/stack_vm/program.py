class Instruction:
    def __init__(self, arg=None):
        self.arg = arg

    def run(self, vm):
        raise NotImplementedError


class Push(Instruction):
    def run(self, vm):
        vm.stack.append(int(self.arg))


class Pop(Instruction):
    def run(self, vm):
        vm.stack.pop()


class Dup(Instruction):
    def run(self, vm):
        vm.stack.append(vm.stack[-1])


class Swap(Instruction):
    def run(self, vm):
        vm.stack[-1], vm.stack[-2] = vm.stack[-2], vm.stack[-1]


class BinaryOp(Instruction):
    def run(self, vm):
        b = vm.stack.pop()
        a = vm.stack.pop()
        vm.stack.append(self.apply(a, b))


class Add(BinaryOp):
    def apply(self, a, b):
        return a + b


class Sub(BinaryOp):
    def apply(self, a, b):
        return a - b


class Mul(BinaryOp):
    def apply(self, a, b):
        return a * b


class Print(Instruction):
    def run(self, vm):
        vm.output.append(vm.stack[-1])


class JumpIfZero(Instruction):
    def run(self, vm):
        if vm.stack.pop() == 0:
            vm.pc = int(self.arg) - 1


class Jump(Instruction):
    def run(self, vm):
        vm.pc = int(self.arg) - 1


class Store(Instruction):
    def run(self, vm):
        vm.registers[self.arg] = vm.stack.pop()


class Load(Instruction):
    def run(self, vm):
        vm.stack.append(vm.registers[self.arg])


OPCODES = {"push": Push, "pop": Pop, "dup": Dup, "swap": Swap, "add": Add,
           "sub": Sub, "mul": Mul, "print": Print, "jz": JumpIfZero,
           "jmp": Jump, "store": Store, "load": Load}


class VM:
    def __init__(self, program):
        self.program = program
        self.stack = []
        self.output = []
        self.registers = {}
        self.pc = 0

    def execute(self, limit=200):
        steps = 0
        while self.pc < len(self.program) and steps < limit:
            self.program[self.pc].run(self)
            self.pc += 1
            steps += 1
        return steps


def assemble(source):
    program = []
    for line in source.split(";"):
        parts = line.split()
        program.append(OPCODES[parts[0]](*parts[1:]))
    return program


def main(source):
    vm = VM(assemble(source))
    steps = vm.execute()
    return steps, vm.stack, vm.output
