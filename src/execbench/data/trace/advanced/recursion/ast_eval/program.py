def lookup(env, name):
    if env is None:
        raise KeyError(name)
    key, value, parent = env
    if key == name:
        return value
    return lookup(parent, name)


def evaluate(node, env):
    kind = node[0]
    if kind == "num":
        return node[1]
    if kind == "var":
        return lookup(env, node[1])
    if kind == "add":
        return evaluate(node[1], env) + evaluate(node[2], env)
    if kind == "mul":
        return evaluate(node[1], env) * evaluate(node[2], env)
    if kind == "let":
        bound = evaluate(node[2], env)
        return evaluate(node[3], (node[1], bound, env))
    if kind == "if":
        if evaluate(node[1], env) != 0:
            return evaluate(node[2], env)
        return evaluate(node[3], env)
    raise ValueError(kind)


def run(program):
    return evaluate(program, None)
