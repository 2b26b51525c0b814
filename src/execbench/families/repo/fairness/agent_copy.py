"""The agent's masked copy of a test module: what ``--mode agent`` reads instead of the original.

The original test module shows every answer (``assert cache.currsize == 7``), so the agent
never reads it. It reads a copy built with the tasks (:func:`masked_copy`): every expected
operand of every maskable assertion of the module replaced by ``___`` (the values of the
module's tasks, and those of assertions that became no task: a sibling test with the same
assertion would show the answer), every span a task's prompt hides (literal definitions of
the question's variable, compared values equal to the answer), and module- or class-level
constants that only hidden spans read (boltons' ``NORM_DATA_OUTPUT``, the histogram an
assertion compares with). The copy is stored content-addressed beside the traces
(:func:`store`); a task names the copies of its test file and of the module holding its
function in ``prompt_fields.agent_copies`` (``{path: ref}``), and the browser serves them at
those paths (``agent_tools.RepoBrowser``). A copy that cannot be loaded is not replaced by
the original: the path is refused.

:func:`answer_lines` are the original's lines the masking changed: another file of the
tree holding one of them together with at least half of the lines of its test function
(:func:`copy_signatures`, :func:`holds_copy`: a copy left beside the module, a backup, an
old version of it) is refused to the agent. :func:`leak` is the leak gate on the copy (``answer_visible:
agent_copy ...``): a comment or docstring of the copy stating the answer, or a module or
class constant of the copy equal to the answer that the asked computation does not read
(only answers distinctive enough for the comment check: ``LIMIT = 6`` beside an answer 6
shows nothing).

The gate runs for every task of a module on the same copy: the copy's comments and its
constants are read once per copy text (:func:`_constants`, ``leaks`` caches the comments).
"""

from __future__ import annotations

import ast
import gzip
import json
from functools import lru_cache
from typing import Any, Iterable

from execbench.families.repo.fairness import context, leaks, static_eval
from execbench.families.repo.records.traces import _store_json
from execbench.families.repo.selection import assertions as A
from execbench.sources import repos

MIN_ANSWER_LINE = 8  # shorter changed lines (``1,`` inside a literal) identify no file


def outermost(spans: Iterable[A.Span]) -> list[A.Span]:
    """The spans without those nested in (or overlapping) an earlier one."""
    ordered = sorted(set(spans), key=lambda s: (s.lineno, s.col, -s.end_lineno, -s.end_col))
    kept: list[A.Span] = []
    for s in ordered:
        if kept and (s.lineno, s.col) < (kept[-1].end_lineno, kept[-1].end_col):
            continue
        kept.append(s)
    return kept


def _only_hidden_constants(source: str, spans: list[A.Span]) -> list[A.Span]:
    """Values of module- and class-level assignments whose names are read somewhere, and
    only inside ``spans`` (the constant an assertion compares with is its answer)."""
    tree = ast.parse(source)
    loads: dict[str, list[ast.Name]] = {}
    attributes: dict[str, list[ast.Attribute]] = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            loads.setdefault(n.id, []).append(n)
        elif isinstance(n, ast.Attribute):
            attributes.setdefault(n.attr, []).append(n)
    out = []
    bodies = [tree.body] + [n.body for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    for body in bodies:
        for stmt in body:
            if not isinstance(stmt, (ast.Assign, ast.AnnAssign)) or stmt.value is None:
                continue
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            if not names or len(names) != len(targets):
                continue
            # class-level names are read as attributes (self.EXPECTED): count those reads too
            attr_reads = [n for name in dict.fromkeys(names) for n in attributes.get(name, [])]
            reads = [n for name in names for n in loads.get(name, [])] + attr_reads
            if reads and all(context._within(n, spans) for n in reads):
                out.append(A.Span.of(stmt.value))
    return out


def masked_copy(source: str, spans: Iterable[A.Span]) -> str:
    """``source`` with ``spans`` and the constants only they read replaced by ``___``."""
    spans = list(spans)
    try:
        spans += _only_hidden_constants(source, spans)
    except SyntaxError:
        pass
    return A.apply(source, [A.Splice(s, "___") for s in outermost(spans)])


def store(text: str) -> str:
    """Stores a copy; returns its ref (relative to the repos cache)."""
    return _store_json({"agent_copy": text})


def load(ref: str) -> str:
    with gzip.open(repos.from_portable(ref), "rb") as fh:
        data = json.loads(fh.read())
    text = data.get("agent_copy") if isinstance(data, dict) else None
    if not isinstance(text, str):
        raise ValueError(f"{ref} is not an agent copy")
    return text


def answer_lines(original: str, masked: str) -> set[str]:
    """Stripped lines of ``original`` that the masking changed (at least
    :data:`MIN_ANSWER_LINE` characters)."""
    kept = {line.strip() for line in masked.splitlines()}
    return {s for line in original.splitlines() if len(s := line.strip()) >= MIN_ANSWER_LINE and s not in kept}


def copy_signatures(original: str, masked: str) -> list[tuple[frozenset[str], frozenset[str]]]:
    """Per function of ``original`` that holds answer lines (and once for the module-level
    lines): (its stripped lines of at least :data:`MIN_ANSWER_LINE` characters, its answer
    lines). A file holding one of those answer lines and at least half of the lines around
    it (:func:`holds_copy`) is a copy of that test: a backup, an old version, a paste. A
    sibling test module that repeats one line (jinja2's ``assert tmpl.render() == "bar"``)
    is not."""
    answers = answer_lines(original, masked)
    if not answers:
        return []
    lines = original.splitlines()
    try:
        tree = ast.parse(original)
    except SyntaxError:
        return [(frozenset(s for line in lines if len(s := line.strip()) >= MIN_ANSWER_LINE), frozenset(answers))]
    inside: set[int] = set()
    groups: list[list[str]] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            numbers = range(node.lineno, (node.end_lineno or node.lineno) + 1)
            inside.update(numbers)
            groups.append([lines[n - 1] for n in numbers])
    groups.append([line for n, line in enumerate(lines, 1) if n not in inside])
    out = []
    for group in groups:
        stripped = frozenset(s for line in group if len(s := line.strip()) >= MIN_ANSWER_LINE)
        if stripped & answers:
            out.append((stripped, frozenset(stripped & answers)))
    return out


def holds_copy(text: str, signatures: list[tuple[frozenset[str], frozenset[str]]]) -> bool:
    """``text`` holds a copy of a test with answer lines (:func:`copy_signatures`)."""
    if not signatures:
        return False
    present = {line.strip() for line in text.splitlines()}
    return any(answers & present and 2 * len(group & present) >= len(group) for group, answers in signatures)


def leak(answer: str, copy: str, inputs: set[str], own: str | None = None) -> str | None:
    """The leak gate on an agent copy (module doc), or None."""
    found = leak_at(answer, copy, inputs, own)
    return found[0] if found else None


def leak_at(answer: str, copy: str, inputs: set[str], own: str | None = None,
            path: str = "") -> tuple[str, str] | None:
    """(the ``answer_visible: agent_copy ...`` reason, the place in the copy that shows the
    answer), or None. ``own``: the qualified name of the task's test function, whose shown text
    the prompt's gate (:func:`leaks.answer_visible_at`) has judged with the asked computation's
    inputs; ``path``: the copy's file, named in the place."""
    where = f"{path}: " if path else ""
    comment = leaks.comment_stating(answer, [copy], words_quoted=True)
    if comment is not None:
        return "answer_visible: agent_copy comment", where + comment[:120]
    want = leaks._parse(answer)
    if want is None or not leaks._distinctive_texts(answer):
        return None  # a module constant 0 or True next to such an answer shows nothing
    for names, value in _constants(copy):
        if names & inputs:
            continue  # a genuine input of the asked computation (a round trip) is fair
        if leaks._equal(value, want):
            return "answer_visible: agent_copy constant", where + ", ".join(sorted(names))
    from execbench.families.repo.grading.compare import same

    for qualname, place, computed in _computed(copy):
        if qualname == own:
            continue
        try:
            if same(computed, want):
                return "answer_visible: agent_copy expression", f"{where}{qualname} {place}"
        except (static_eval.NotStatic, RecursionError, TypeError, ValueError):
            continue
    return None


@lru_cache(maxsize=4)
def _computed(copy: str) -> tuple[tuple[str, str, tuple], ...]:
    """Per function of the copy, the values a reader computes without the library (the
    prompt's analysis, :func:`leaks.static_values` / :mod:`.static_eval`): each operand of an
    equality assertion (``assert f() == ['neg'] * 5``, ``self.assertEqual(x, list(range(4)))``)
    and each binding that nothing but assertions reads (``expected = [(True, x) for x in
    'ab']``): (the function's qualified name, ``line N: <text>`` in the copy, the value in the
    grader's canonical form). Once per copy text; none when the copy does not parse."""
    try:
        functions = A.test_functions(copy)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ()
    out: list[tuple[str, str, tuple]] = []
    for function in functions.values():
        static = leaks.static_names(function)
        values = {k: v for k, v in leaks.static_values(function).items() if k in static}
        shadowed = function.local_names - set(values)
        compared = [o for a in function.assertions if a.op in ("==", "is") for o in a.operands]
        # nodes inside a compared side a reader evaluates: a name read there is an expected value,
        # a name read anywhere else (``decode(encode(data)) == data``) is an input of that test
        expected = {id(n) for o in compared if static_eval.try_value(o, values, shadowed)[0] for n in ast.walk(o)}
        shown: list[tuple[ast.AST, ast.AST]] = []  # (the value, the text naming its place)
        for stmt in ast.walk(function.node):
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                    and not leaks._loaded_outside(function, stmt.targets[0].id,
                                                  expected | {id(n) for n in ast.walk(stmt)}):
                shown.append((stmt.value, stmt))
        shown += [(o, o) for o in compared if not (isinstance(o, ast.Name) and o.id in values)]
        for node, place in shown:
            ok, value = static_eval.try_value(node, values, shadowed)
            if not ok:
                continue
            try:
                canonical = static_eval.canonical_of(value)
            except (static_eval.NotStatic, RecursionError, TypeError, ValueError):
                continue
            text = " ".join(A.segment(copy, place).split())
            out.append((function.qualname, f"line {getattr(place, 'lineno', '?')}: {text[:120]}", canonical))
    return tuple(out)


@lru_cache(maxsize=4)
def _constants(copy: str) -> tuple[tuple[frozenset[str], str], ...]:
    """The copy's module- and class-level assignments: (the names bound, the value's text),
    in the order :func:`leak` checks them; none when the copy does not parse."""
    try:
        tree = ast.parse(copy)
    except SyntaxError:
        return ()
    out = []
    bodies: list[Any] = [tree.body] + [n.body for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    for body in bodies:
        for stmt in body:
            if not isinstance(stmt, (ast.Assign, ast.AnnAssign)) or stmt.value is None:
                continue
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names = frozenset(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
            out.append((names, ast.unparse(stmt.value)))
    return tuple(out)
