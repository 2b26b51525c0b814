"""Does beniget give the scope resolution that :mod:`execbench.mutation.scopes` computes by hand?

Issue 17 asks whether ``mutation/scopes.py`` can be rebuilt on beniget's use-def chains
(beniget is already a dependency of slicing). This script resolves every identifier
occurrence that ``scopes.resolve`` records (``Name``, parameter, ``def``/``class`` name,
``except ... as`` name, ``global``/``nonlocal`` entry, import and ``match`` binding) with
both, and compares the scope of the binding each one refers to.

beniget (0.5) runs on the standard ``ast`` tree as well as on gast's, so its chains are
keyed by the very nodes ``ast.walk`` yields: no gast-to-ast mapping is needed and an
occurrence keeps its address (its index in ``ast.walk`` order). beniget's answer for an
occurrence is read like this:

* a binding (store, parameter, ``def``/``class``, ``except``/``import``/``match`` name,
  ``:=`` target): the scope node in whose ``DefUseChains.locals`` its ``Def`` sits;
* a use (load, ``del``): ``UseDefChains.chains[node]``, the definitions that reach it,
  mapped to their scopes (a builtin's ``Def`` to the module). No reaching definition
  (beniget chains the node to itself) is ``unresolved``; definitions in more than one
  scope are ``ambiguous``;
* a ``global``/``nonlocal`` entry: beniget keeps these names in an internal stack and
  chains nothing to them, so they have no answer (``no node``).

Corpus: every HumanEval program (prompt + canonical solution), the shipped trace and
state Python programs, the shipped CRUXEval programs, and the hard cases of scopes.py's
docstring and tests (:data:`HARD_CASES`).

    python benchmarks/scopes_beniget.py            # counts and one minimal example per kind
    python benchmarks/scopes_beniget.py --show 3   # also up to 3 corpus occurrences per kind
"""

from __future__ import annotations

import argparse
import ast
import textwrap
import time
from collections import Counter, defaultdict
from pathlib import Path

import beniget

from execbench.mutation import scopes
from execbench.sources import cruxeval, humaneval

DATA = Path(__file__).resolve().parent.parent / "src" / "execbench" / "data"

HARD_CASES = {
    "class body skipped by a nested function": """\
        x = 1
        class C:
            x = 2
            def m(self):
                return x
        """,
    "class-body name as a method default": """\
        class C:
            d = 3
            def m(self, a=d):
                return a
        """,
    "comprehension: first iterable outside, later ones inside": """\
        def f(x, rows):
            return [x for x in x], [y for r in rows for y in r]
        """,
    ":= target in a comprehension binds in the function": """\
        def f(xs):
            hits = [(y := v) for v in xs if v]
            return hits, y
        """,
    "global": """\
        n = 0
        def bump():
            global n
            n = n + 1
            return n
        """,
    "nonlocal": """\
        def outer():
            c = 0
            def inner():
                nonlocal c
                c += 1
                return c
            return inner(), c
        """,
    "decorators, defaults, annotations in the enclosing scope": """\
        def deco(f):
            return f
        def outer(k: int = 1):
            t = int
            @deco
            def inner(a: t = k) -> t:
                return a
            class K(t):
                pass
            g = lambda z, w=k: z + w
            return inner, K, g
        """,
    "match bindings": """\
        def f(p):
            match p:
                case [a, *rest]:
                    return a, rest
                case {"k": v, **others}:
                    return v, others
                case str() as whole:
                    return whole
        """,
    "except ... as": """\
        def f():
            try:
                return 1 // 0
            except ZeroDivisionError as e:
                return str(e)
        """,
    "nonlocal, plain assignment": """\
        def outer():
            c = 0
            def inner():
                nonlocal c
                c = 5
            inner()
            return c
        """,
    "global, plain assignment": """\
        n = 0
        def reset():
            global n
            n = 5
        """,
    "del, then a new binding": """\
        def f():
            x = 1
            del x
            x = 2
            return x
        """,
    "name read after del": """\
        def f():
            x = 1
            del x
            return x
        """,
    "local read before its assignment": """\
        def f():
            print(x)
            x = 1
        """,
    "code after return": """\
        def f(a):
            return a
            b = a
            return b
        """,
    "class body reads a global of the same name": """\
        x = 1
        class C:
            x = x + 1
        """,
    "class body binds conditionally, then reads": """\
        x = 1
        class C:
            if x:
                x = 2
            y = x
        """,
    "function reads a global defined after it": """\
        def f():
            return later
        later = 1
        """,
    "name defined nowhere": """\
        def f():
            return undefined_name
        """,
    "imports at module and function level": """\
        import os.path
        from math import sqrt as root
        def f(v):
            import json
            return json.dumps(root(v)), os.sep
        """,
}


def _hand(tree: ast.Module) -> list[tuple[tuple[int, str, str, int], int]]:
    """scopes.py: [((walk index, kind, name, k-th such occurrence of the node), binding scope's node index)]."""
    res = scopes.resolve(tree)
    seen: Counter = Counter()
    out = []
    for occ, owner in res.occurrences:
        key = (occ.index, occ.kind, occ.name)
        slot = occ.slot if occ.kind in ("global", "nonlocal") else seen[key]
        seen[key] += 1
        out.append(((occ.index, occ.kind, occ.name, slot), owner.node_index))
    return out


class _Chains(beniget.DefUseChains):
    def warn(self, msg, node):  # beniget prints warnings (unbound names ...): keep quiet
        pass

    def unbound_identifier(self, name, node):
        pass


def _beniget(tree: ast.Module, augmented: bool = True) -> dict[tuple[int, str, str, int], int | str]:
    """beniget's answer for each occurrence key of :func:`_hand` (a scope's node index, or a reason);
    ``augmented=False`` reads ``locals`` alone (no rule for augmented assignments)."""
    nodes = list(ast.walk(tree))
    index = {id(node): i for i, node in enumerate(nodes)}
    duc = _Chains()
    duc.visit(tree)
    udc = beniget.UseDefChains(duc)
    scope_of: dict[int, int] = {}  # id(def node) -> index of the scope node whose locals hold it
    for scope_node, defs in duc.locals.items():
        for d in defs:
            if isinstance(d.node, ast.AST):
                scope_of[id(d.node)] = index[id(scope_node)]

    def scopes_of_def(node: ast.AST, seen: set[int]) -> set[int | str]:
        """Where a definition lives. beniget's ``locals`` hold fresh bindings only: an augmented
        assignment's target (``n += 1``) is a definition outside them that reads the previous one,
        so it lives where the definitions it reads live."""
        if id(node) in scope_of:
            return {scope_of[id(node)]}
        if id(node) in seen or not augmented:
            return set()
        seen.add(id(node))
        found: set[int | str] = set()
        name = duc.chains[node].name()
        for d in udc.chains.get(node, ()):
            if d.node is not node and d.name() == name:  # not the assigned value's expression
                found |= scopes_of_def(d.node, seen) if isinstance(d.node, ast.AST) else {0}
        return found

    def binding(node: ast.AST) -> int | str:
        found = scopes_of_def(node, set())
        if not found:
            return "no scope (a store beniget keeps outside locals)"
        return found.pop() if len(found) == 1 else "ambiguous"

    def use(node: ast.AST) -> int | str:
        defs = udc.chains.get(node)
        if defs is None:
            return "not in chains"
        found: set[int | str] = set()
        for d in defs:
            if d.node is node:
                found.add("unresolved")  # beniget chains an unbound name to itself
            elif not isinstance(d.node, ast.AST):
                found.add(0)  # a builtin
            elif d.name() == node.id:  # not an expression chained to it (``self.a += n`` chains n to self.a)
                found |= scopes_of_def(d.node, set()) or {"no scope (a store beniget keeps outside locals)"}
        if len(found) > 1:
            return "ambiguous"
        return found.pop() if found else "unresolved"

    out: dict[tuple[int, str, str, int], int | str] = {}
    for key, _ in _hand(tree):
        position, kind, name, slot = key
        node = nodes[position]
        if kind == "name":
            out[key] = use(node) if isinstance(node.ctx, (ast.Load, ast.Del)) else binding(node)
        elif kind in ("arg", "def", "class", "except"):
            out[key] = binding(node)
        elif kind == "fixed" and isinstance(node, (ast.Import, ast.ImportFrom)):
            out[key] = binding(node.names[slot])
        elif kind == "fixed":
            out[key] = binding(node)  # MatchAs / MatchStar / MatchMapping: the pattern node is the Def
        else:
            out[key] = "no node"  # global / nonlocal entries
    return out


def _corpus() -> list[tuple[str, str]]:
    programs = [(p.task_id, p.program) for p in humaneval.problems()]
    for path in sorted((DATA / "trace").rglob("*.py")) + sorted((DATA / "state").rglob("*.py")):
        programs.append((str(path.relative_to(DATA)), path.read_text(encoding="utf-8")))
    problems, _ = cruxeval.read()
    programs += [(f"cruxeval/{p.id}", p.code) for p in problems]
    return programs


def _describe(tree: ast.Module, key: tuple[int, str, str, int], hand: int, other: int | str) -> str:
    nodes = list(ast.walk(tree))
    node = nodes[key[0]]
    where = f"line {getattr(node, 'lineno', '?')}"

    def scope_name(i: int | str) -> str:
        if isinstance(i, str):
            return i
        target = nodes[i]
        return "<module>" if isinstance(target, ast.Module) else f"{type(target).__name__} line {target.lineno}"

    ctx = type(getattr(node, "ctx", None)).__name__ if key[1] == "name" else ""
    return f"{key[1]} {ctx} {key[2]!r} ({where}): scopes.py -> {scope_name(hand)}, beniget -> {scope_name(other)}"


def _category(tree: ast.Module, key: tuple[int, str, str, int], hand: int, other: int | str) -> str:
    node = list(ast.walk(tree))[key[0]]
    what = key[1] if key[1] != "name" else f"name/{type(node.ctx).__name__}"
    return f"{what}: {other}" if isinstance(other, str) else f"{what}: a different scope"


def compare(programs: list[tuple[str, str]], augmented: bool = True
            ) -> tuple[Counter, dict[str, list[tuple[str, str]]], int, int]:
    totals: Counter = Counter()
    examples: dict[str, list[tuple[str, str]]] = defaultdict(list)
    equal_programs = 0
    for label, source in programs:
        tree = ast.parse(source)
        hand = _hand(tree)
        other = _beniget(ast.parse(source), augmented)
        same = True
        for key, scope in hand:
            totals["occurrences"] += 1
            if other[key] == scope:
                totals["agree"] += 1
                continue
            same = False
            category = _category(tree, key, scope, other[key])
            totals[category] += 1
            examples[category].append((label, _describe(tree, key, scope, other[key])))
        equal_programs += same
    return totals, examples, equal_programs, len(programs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--show", type=int, default=0, help="corpus occurrences to print per kind")
    parser.add_argument("--no-augmented", action="store_true",
                        help="read beniget's locals alone, without the rule for augmented assignments")
    args = parser.parse_args()

    corpus = _corpus()
    groups = {
        "HumanEval": [c for c in corpus if c[0].startswith("HumanEval/")],
        "trace + state": [c for c in corpus if c[0].startswith(("trace/", "state/"))],
        "CRUXEval": [c for c in corpus if c[0].startswith("cruxeval/")],
    }
    print("| corpus | programs | same map | occurrences | agree |")
    print("|---|---:|---:|---:|---:|")
    kinds: Counter = Counter()
    corpus_examples: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for name, programs in groups.items():
        totals, examples, equal, count = compare(programs, not args.no_augmented)
        print(f"| {name} | {count} | {equal} | {totals['occurrences']} | {totals['agree']} |")
        for key, value in totals.items():
            if key not in ("occurrences", "agree"):
                kinds[key] += value
        for key, value in examples.items():
            corpus_examples[key].extend(value)
    trees = [ast.parse(source) for _, source in corpus]
    started = time.perf_counter()
    for tree in trees:
        scopes.resolve(tree)
    hand_time = time.perf_counter() - started
    started = time.perf_counter()
    for tree in trees:
        chains = _Chains()
        chains.visit(tree)
        beniget.UseDefChains(chains)
    beniget_time = time.perf_counter() - started
    print(f"\nTime over the {len(trees)} programs: scopes.resolve {hand_time:.2f} s, "
          f"beniget DefUseChains + UseDefChains {beniget_time:.2f} s")
    print("\nDisagreements on the corpus, by kind:")
    for kind, count in kinds.most_common():
        print(f"  {count:6d}  {kind}")
        for label, text in corpus_examples[kind][:args.show]:
            print(f"          {label}: {text}")

    print("\nHard cases (scopes.py's docstring and tests):")
    for title, source in HARD_CASES.items():
        source = textwrap.dedent(source)
        totals, examples, equal, _ = compare([(title, source)], not args.no_augmented)
        verdict = "same" if equal else "DIFFERENT"
        print(f"- {title}: {verdict} ({totals['agree']}/{totals['occurrences']} occurrences agree)")
        for lines in examples.values():
            for _, text in lines:
                print(f"      {text}")


if __name__ == "__main__":
    main()
