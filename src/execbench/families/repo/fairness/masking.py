"""What the prompt hides: the masked operand, the question's inputs and every other place that shows the answer.

The spans of a test function hidden from the prompt (the masked operand, literals bound to the
question's variables, other texts equal to the answer) and the agent's masked copies of the
test modules. Split out of :mod:`.build`.
"""

from __future__ import annotations

import ast
from collections import defaultdict

from execbench.families.repo.fairness import agent_copy, leaks, static_eval
from execbench.families.repo.records.steps import Item, Module, Pending
from execbench.families.repo.selection import assertions as A
from execbench.families.repo.selection import dvp
from execbench.families.repo.verification.answers import _definitions


def _hidden_spans(items: dict[str, Item], it: Item, answer: str | None = None) -> list[A.Span]:
    """Expected operands of the function's other maskable assertions whose text shows a
    value (literals, constants, attributes, constructors; plain variable names show
    nothing); right-hand sides bound to the question's variable that show its value (literals,
    constructors, or expressions a reader computes: ``['neg'] * 5 + ['notneg'] * 5``) unless
    the variable is an input of the asked expression (``data1 = [...]`` feeding ``unique(data1 *
    3)``: hiding it makes the question unanswerable); and every compared value of another
    assertion that equals the answer (:func:`_answer_elsewhere`)."""
    spans = []
    for other in items.values():
        if (other.function is it.function and other is not it and isinstance(other.choice, dvp.Choice)
                and not other.choice.variable):
            spans.append(A.Span.of(other.assertion.operands[other.choice.masked]))
    choice = it.choice
    assert isinstance(choice, dvp.Choice)
    if not (choice.variable and it.assertion.operands[choice.masked].id in  # type: ignore[attr-defined]  # ast.AST declares no fields; the node is a kind that has it
            _inputs(it.function, it.assertion.operands[choice.actual])):
        static = leaks.static_values(it.function)
        shadowed = it.function.local_names - set(static)
        spans += [A.Span.of(value) for value, form in _definitions(it)
                  if form.priority in (1, 2, 3, 4) or static_eval.try_value(value, static, shadowed)[0]]
    if answer is not None:
        spans += _answer_elsewhere(it, answer)
    # Nested spans (a hidden operand inside another) would overlap: keep the outermost.
    return agent_copy.outermost(spans)


def _agent_copies(modules: list[Module], items: dict[str, Item], admitted: list[Pending]) -> dict[str, str]:
    """Each module's masked copy for the agent (:mod:`.agent_copy`): the expected operand of
    every maskable assertion and every span an admitted task's prompt hides."""
    spans: dict[str, list[A.Span]] = defaultdict(list)
    for it in items.values():
        if isinstance(it.choice, dvp.Choice):
            spans[it.module.rel] += [A.Span.of(it.assertion.operands[it.choice.masked]), *_hidden_spans(items, it)]
    for p in admitted:
        assert p.answer is not None
        spans[p.item.module.rel] += _hidden_spans(items, p.item, p.answer["text"])
    copies = {}
    for m in modules:
        try:
            copies[m.rel] = agent_copy.masked_copy(m.source, spans[m.rel])
        except ValueError:  # spans that do not splice: no copy, so the agent is refused the module
            continue
    return copies


def _bound_names(stmt: ast.AST) -> set[str]:
    """Names a statement binds or may change (targets, and the names of a bare call)."""
    targets: list[ast.AST] = []
    if isinstance(stmt, ast.Assign):
        targets = list(stmt.targets)
    elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
        targets = [stmt.target]
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        targets = [i.optional_vars for i in stmt.items if i.optional_vars is not None]
    elif isinstance(stmt, ast.Expr):  # cache.update(data), f(x): may change what they touch
        targets = [stmt.value]
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _read_names(stmt: ast.AST) -> set[str]:
    parts: list[ast.AST] = []
    if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)):
        parts = [stmt.value] if stmt.value is not None else []
        if isinstance(stmt, ast.Assign):  # d[k] = v reads k
            parts += [t for t in stmt.targets if not isinstance(t, ast.Name)]
    elif isinstance(stmt, (ast.For, ast.AsyncFor)):
        parts = [stmt.iter]
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        parts = [i.context_expr for i in stmt.items]
    return {n.id for p in parts for n in ast.walk(p) if isinstance(n, ast.Name)}


def _inputs(function: A.TestFunction, expr: ast.expr) -> set[str]:
    """Names the value of ``expr`` depends on inside the test function (a fixed point over
    the statements that bind or touch a name already in the set)."""
    deps = {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}
    # Assertion statements change nothing they compare (``self.assertEqual(actual, expected)``
    # does not feed ``actual`` from ``expected``: the unittest ``expected = [...]`` pattern).
    asserting = {id(a.node) for a in function.assertions if a.node is not None}
    stmts = [n for n in ast.walk(function.node) if isinstance(n, ast.stmt) and n is not function.node
             and id(n) not in asserting]
    changed = True
    while changed:
        changed = False
        for stmt in stmts:
            if _bound_names(stmt) & deps:
                new = _read_names(stmt) - deps
                if new:
                    deps |= new
                    changed = True
    return deps


def _compared(node: ast.AST) -> list[ast.expr]:
    """Values an assertion compares: the operands of its comparisons (through ``not``,
    ``and``/``or``), the elements of a literal container after ``in``, unittest arguments."""
    out: list[ast.expr] = []
    if isinstance(node, ast.Assert):
        todo: list[ast.AST] = [node.test]
        while todo:
            cur = todo.pop()
            if isinstance(cur, ast.BoolOp):
                todo += cur.values
            elif isinstance(cur, ast.UnaryOp) and isinstance(cur.op, ast.Not):
                todo.append(cur.operand)
            elif isinstance(cur, ast.Compare):
                for op, right in zip(cur.ops, cur.comparators):
                    out.append(right)
                    if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
                        out += right.elts
                out.append(cur.left)
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        for arg in node.value.args[:2]:
            out.append(arg)
            if isinstance(arg, (ast.Tuple, ast.List, ast.Set)):
                out += arg.elts
    return out


def _answer_elsewhere(it: Item, answer: str) -> list[A.Span]:
    """Compared values of the test's other assertions that equal the answer (grader
    equality, no execution): they are hidden too, or the answer would stand on the page. Equal
    means: as the grader reads the text; by the value a reader computes (:mod:`.static_eval`:
    ``{'foo'} | {f'foo_{i}' for i in range(3)}``); or, for a plain variable, by its one shown
    definition: ``arw.shift(weekday=SU) == arw`` beside the question ``arw.shift(weekday=6) ==
    ___`` shows the answer, ``arw = arrow.Arrow(2013, 5, 5, ...)`` (a plain variable whose value
    is not on the page shows nothing and stays)."""
    from execbench.families.repo.grading.compare import Refused, parse_answer, same

    try:
        want = parse_answer(answer)
    except (Refused, RecursionError):
        return []
    function = it.function
    static = leaks.static_values(function)
    static = {k: v for k, v in static.items() if k in leaks.static_names(function)}
    shadowed = function.local_names - set(static)
    definitions = _single_definitions(function)
    out = []
    for other in function.assertions:
        if other is it.assertion or other.node is None:
            continue
        for node in _compared(other.node):
            if isinstance(node, ast.Name):  # a variable shows its value only through `==` (not `is`)
                shown = definitions.get(node.id) if other.op == "==" else None
                if shown is not None and (_text_equal(A.segment(it.module.source, shown), want)
                                          or static_eval.equals(shown, want, static, shadowed)):
                    out.append(A.Span.of(node))
                continue
            if dvp.classify(node, function.local_names).priority in (1, 2, 3, 4):
                try:
                    if same(parse_answer(A.segment(it.module.source, node)), want):
                        out.append(A.Span.of(node))
                        continue
                except (Refused, RecursionError):
                    pass
            if static_eval.equals(node, want, static, shadowed):
                out.append(A.Span.of(node))
    return out


def _text_equal(text: str, want: tuple) -> bool:
    from execbench.families.repo.grading.compare import Refused, parse_answer, same

    try:
        return same(parse_answer(text), want)
    except (Refused, RecursionError):
        return False


def _single_definitions(function: A.TestFunction) -> dict[str, ast.expr]:
    """Right-hand sides of the names the function binds exactly once, by a one-name assignment
    (computed once per function: read only)."""
    return A.derived(function, _one_name_definitions)


def _one_name_definitions(function: A.TestFunction) -> dict[str, ast.expr]:
    counts: dict[str, int] = defaultdict(int)
    values: dict[str, ast.expr] = {}
    for node in ast.walk(function.node):
        for name in _bound_names(node) if not isinstance(node, ast.Expr) else ():
            counts[name] += 1
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            values[node.targets[0].id] = node.value
    return {k: v for k, v in values.items() if counts[k] == 1}
