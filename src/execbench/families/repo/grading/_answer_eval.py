"""Runs INSIDE the sandbox, under the package's venv interpreter: is a model's answer equal to
a repo task's key as the task's assertion judges it?

Shipped as a file into the job's directory (it imports nothing of execbench: the venv does
not have it). Reads ``request.json`` (written by :mod:`execbench.families.repo.grading.exec_grade`),
writes ``result.json``:

1. imports what the test module's own import statements import (``imports``, with
   importlib; a failing one skipped) into a namespace: the repository's code runs here,
   sandboxed;
2. builds the key's and the answer's values by interpreting their AST over a whitelist
   (:func:`build`), never ``eval``/``exec``: literals, containers, signed numbers, names the
   imports bound or a few pure builtins (:data:`SAFE_BUILTINS`: the builtin types, ``range``,
   ``reversed``, ``sorted``, ``len``, ``min``, ``max``, ``abs``), attribute chains on them (no
   ``_``-prefixed part),
   and calls of those with such arguments (keywords included, no ``*``/``**``);
3. compares them with the assertion's operator and operand order (``==``: ``key == answer``
   when the answer is the right operand, as in ``assert actual == ___``; ``is``: identity),
   and checks that the answer is not an object equal to everything (an unrelated sentinel).
"""

import ast
import importlib
import json
import sys

MAX_NODES = 2000
SAFE_BUILTINS = {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset, "dict": dict, "str": str,
                 "int": int, "float": float, "bool": bool, "bytes": bytes, "complex": complex, "range": range,
                 "reversed": reversed, "sorted": sorted, "len": len, "min": min, "max": max, "abs": abs}


class Refused(Exception):
    pass


class _Sentinel:
    def __eq__(self, other):
        return self is other

    def __hash__(self):
        return 0


def check(node, names):
    """The whitelist (the grader checked it already; checked again here)."""
    count = 0
    for n in ast.walk(node):
        count += 1
        if count > MAX_NODES:
            raise Refused("answer too large")
        if isinstance(n, ast.Attribute) and n.attr.startswith("_"):
            raise Refused("private or dunder attribute")
        if isinstance(n, ast.Name) and (n.id.startswith("_") or (n.id not in names and n.id not in SAFE_BUILTINS)):
            raise Refused(f"name {n.id!r} is not imported by the test module")
        allowed = (ast.Expression, ast.Constant, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.Name, ast.Load,
                   ast.Attribute, ast.Call, ast.keyword, ast.UnaryOp, ast.USub, ast.UAdd, ast.BinOp, ast.Add,
                   ast.Sub)
        if not isinstance(n, allowed):
            raise Refused(f"not allowed: {type(n).__name__}")
        if isinstance(n, ast.Call) and (any(isinstance(a, ast.Starred) for a in n.args)
                                        or any(k.arg is None for k in n.keywords)):
            raise Refused("* or ** in a call")
        if isinstance(n, ast.Dict) and any(k is None for k in n.keys):
            raise Refused("** in a dict")
        if isinstance(n, ast.BinOp) and not (isinstance(n.right, ast.Constant) and isinstance(n.right.value, complex)):
            raise Refused("arithmetic")


def build(node, names):
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.List):
        return [build(e, names) for e in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(build(e, names) for e in node.elts)
    if isinstance(node, ast.Set):
        return {build(e, names) for e in node.elts}
    if isinstance(node, ast.Dict):
        return {build(k, names): build(v, names) for k, v in zip(node.keys, node.values)}
    if isinstance(node, ast.UnaryOp):
        value = build(node.operand, names)
        if not isinstance(value, (int, float, complex)) or isinstance(value, bool):
            raise Refused("sign on a non-number")
        return -value if isinstance(node.op, ast.USub) else +value
    if isinstance(node, ast.BinOp):  # a + bj
        left, right = build(node.left, names), build(node.right, names)
        if not isinstance(left, (int, float)) or isinstance(left, bool):
            raise Refused("arithmetic")
        return left + right if isinstance(node.op, ast.Add) else left - right
    if isinstance(node, ast.Name):
        return names[node.id] if node.id in names else SAFE_BUILTINS[node.id]
    if isinstance(node, ast.Attribute):
        return getattr(build(node.value, names), node.attr)
    if isinstance(node, ast.Call):
        func = build(node.func, names)
        if not callable(func):
            raise Refused("call of a non-callable")
        return func(*[build(a, names) for a in node.args], **{k.arg: build(k.value, names) for k in node.keywords})
    raise Refused(f"not allowed: {type(node).__name__}")


def value_of(text, names):
    tree = ast.parse(text, mode="eval")
    check(tree, names)
    return build(tree.body, names)


def namespace(imports):
    """The names the test module's imports bind (``imports``: ``[module, [[name, asname], ...]]``
    for ``from module import name as asname``, ``[module, None, asname]`` for ``import module
    as asname``), done with importlib; a failing import is skipped."""
    names = {}
    for entry in imports:
        try:
            module_name, items, alias = (list(entry) + [None])[:3]
            module = importlib.import_module(module_name)
            if items is None:
                if alias:
                    names[alias] = module
                else:
                    top = module_name.split(".")[0]
                    names[top] = importlib.import_module(top)
                continue
            for name, asname in items:
                if name == "*":
                    public = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
                    names.update({n: getattr(module, n) for n in public if hasattr(module, n)})
                    continue
                try:
                    names[asname or name] = getattr(module, name)
                except AttributeError:
                    names[asname or name] = importlib.import_module(f"{module_name}.{name}")
        except BaseException:  # noqa: B036, BLE001 - a failing import of the test module is skipped
            continue
    return names


def compare(op, key, answer, answer_right):
    left, right = (key, answer) if answer_right else (answer, key)
    if op == "is":
        return left is right
    return bool(left == right)


def main():
    with open("request.json", encoding="utf-8") as f:
        request = json.load(f)
    result = {"equal": False, "how": "error"}
    try:
        names = namespace(request["imports"])
        try:
            key = value_of(request["key"], names)
        except Refused as exc:
            result = {"equal": False, "how": "key_refused", "error": str(exc)[:300]}
            raise SystemExit(0) from None
        except Exception as exc:  # noqa: BLE001 - the key does not rebuild here
            result = {"equal": False, "how": "key_error", "error": f"{type(exc).__name__}: {str(exc)[:300]}"}
            raise SystemExit(0) from None
        try:
            answer = value_of(request["answer"], names)
        except Refused as exc:
            result = {"equal": False, "how": "refused", "error": str(exc)[:300]}
            raise SystemExit(0) from None
        except Exception as exc:  # noqa: BLE001 - building the answer raised: the assertion fails
            result = {"equal": False, "how": "answer_raised", "error": f"{type(exc).__name__}: {str(exc)[:300]}"}
            raise SystemExit(0) from None
        right = request["masked_side"] != "left"
        try:
            equal = compare(request["op"], key, answer, right)
            everything = compare(request["op"], _Sentinel(), answer, right)
        except Exception as exc:  # noqa: BLE001 - the comparison raised: the assertion fails
            result = {"equal": False, "how": "compare_raised", "error": f"{type(exc).__name__}: {str(exc)[:300]}"}
            raise SystemExit(0) from None
        if equal and everything:
            result = {"equal": False, "how": "equal_to_everything"}
        else:
            result = {"equal": equal, "how": "executed"}
    finally:
        with open("result.json", "w", encoding="utf-8") as f:
            json.dump(result, f)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
