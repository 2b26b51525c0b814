"""Scope resolution for renaming: each occurrence resolves to the binding Python would use."""

from __future__ import annotations

import ast
import random
import textwrap

from execbench import sandbox
from execbench.mutation.program import mutate_program
from execbench.mutation.scopes import resolve


def bindings(source: str) -> list[tuple[int, str, str, str]]:
    """(line, kind, name, qualname of the binding's scope) for every occurrence, in source order."""
    res = resolve(ast.parse(textwrap.dedent(source)))
    rows = []
    for occ, owner in res.occurrences:
        node = res.nodes[occ.index]
        rows.append(((node.lineno, node.col_offset, occ.slot), (node.lineno, occ.kind, occ.name, owner.qualname)))
    return [row for _, row in sorted(rows)]


def test_class_bodies_are_skipped_and_defaults_decorators_annotations_resolve_outside():
    assert bindings("""\
        x = 1
        class C:
            x = 2
            def m(self, a=x) -> C:
                return x
        """) == [
        (1, "name", "x", "<module>"),
        (2, "class", "C", "<module>"),
        (3, "name", "x", "C"),
        (4, "def", "m", "C"),  # the def's name binds in the class
        (4, "arg", "self", "C.m"),
        (4, "arg", "a", "C.m"),
        (4, "name", "x", "C"),  # the default is evaluated in the class body
        (4, "name", "C", "<module>"),
        (5, "name", "x", "<module>"),  # a method skips the class scope
    ]


def test_comprehensions_walrus_global_nonlocal():
    assert bindings("""\
        n = 0
        def f(x):
            global n
            c = [x for x in x]
            hits = [(y := v) for v in c]
            def inner():
                nonlocal y
                y += n
            return hits, y
        """) == [
        (1, "name", "n", "<module>"),
        (2, "def", "f", "<module>"),
        (2, "arg", "x", "f"),
        (3, "global", "n", "<module>"),
        (4, "name", "c", "f"),
        (4, "name", "x", "f.<listcomp>"),
        (4, "name", "x", "f.<listcomp>"),
        (4, "name", "x", "f"),  # the first iterable is evaluated outside the comprehension
        (5, "name", "hits", "f"),
        (5, "name", "y", "f"),  # := binds in the enclosing function
        (5, "name", "v", "f.<listcomp>"),
        (5, "name", "v", "f.<listcomp>"),
        (5, "name", "c", "f"),
        (6, "def", "inner", "f"),
        (7, "nonlocal", "y", "f"),
        (8, "name", "y", "f"),
        (8, "name", "n", "<module>"),
        (9, "name", "hits", "f"),
        (9, "name", "y", "f"),
    ]


def test_match_except_and_del_bind_in_their_function():
    assert bindings("""\
        def f(p):
            match p:
                case [a, *rest]:
                    del a
            try:
                pass
            except ValueError as err:
                return err
        """) == [
        (1, "def", "f", "<module>"),
        (1, "arg", "p", "f"),
        (2, "name", "p", "f"),
        (3, "fixed", "a", "f"),
        (3, "fixed", "rest", "f"),
        (4, "name", "a", "f"),
        (7, "except", "err", "f"),
        (7, "name", "ValueError", "<module>"),
        (8, "name", "err", "f"),
    ]


def test_a_module_name_read_by_a_class_body_that_rebinds_it_keeps_its_name():
    # the class body reads the module's x before binding its own: renaming the module's x
    # alone would make the mutant raise NameError
    program = "x = 1\nlimit = 5\n\nclass C:\n    x = x + 1\n    limit = 2\n\ndef f():\n    return C.x + limit\n"
    res = resolve(ast.parse(program))
    assert "x" in res.module.fixed and "limit" not in res.module.fixed
    mutant = mutate_program(program, random.Random(0), literals=False, protected={"f"})
    assert "<module>:x" not in mutant.renames and "<module>:limit" in mutant.renames
    runs = [sandbox.run_python(["prog.py"], files={"prog.py": text + "print(f())\n"}) for text in (program, mutant.text)]
    assert all(run.ok for run in runs), [run.stderr.decode() for run in runs]
    assert runs[0].stdout == runs[1].stdout == b"7\n"
