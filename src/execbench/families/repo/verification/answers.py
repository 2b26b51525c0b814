"""Answer candidates of one assertion: what the masked operand's answer can be, and the DVP's checks on them.

Which operand is masked and which texts may stand for its value (the runtime literal, the masked
operand's value, the verified test text: docs/repo-family.md), the wrong values the verify runs
must refuse, the values a reader could read without running the code, and the spellings the
grader accepts. Split out of :mod:`.build`; the verify runs are :mod:`.admission`'s.
"""

from __future__ import annotations

import ast
import json
import os
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from execbench.errors import InternalError
from execbench.contract import Outcome
from execbench.dataset.cache import cache_dir
from execbench.families.repo.records.steps import AnswerCandidate, Item, Pending
from execbench.families.repo.selection import assertions as A
from execbench.families.repo.selection import dvp
from execbench.sources.repos import Repo

if TYPE_CHECKING:
    from execbench.families.repo.records.run_records import RenderedValue, TraceSummary


def _literal(run: dict[str, RenderedValue], side: int) -> str | None:
    """The literal form of one side's rendered value in one execution (None: none)."""
    rendered = run.get(str(side))
    return rendered.get("literal") if rendered else None


def environment_patterns(repo: Repo) -> list[tuple[str, re.Pattern[str]]]:
    """What a value must not contain: the build's own paths (source tree, cache dir, venv,
    interpreter, home dir), its host name and its user name (as ``user@``, ``~user``,
    ``/home/user``; a bare word such as ``root`` is a common value, the home dir covers
    ``/root``). Such values differ between two builds in different places."""
    import getpass
    import socket

    paths: dict[str, str] = {}
    for label, path in [("source tree", repo.root), ("source tree", repo.import_root), ("cache dir", cache_dir()),
                        ("venv", repo.python.parent.parent), ("interpreter", Path(sys.base_prefix)),
                        ("interpreter", Path(sys.prefix)), ("home dir", Path.home())]:
        for variant in {str(path), os.path.realpath(path)}:
            if len(variant) > 1:
                paths.setdefault(variant, label)
    out = [(label, re.compile(r"(?<![\w.~%-])" + re.escape(text) + r"(?![\w.-])"))
           for text, label in sorted(paths.items(), key=lambda kv: -len(kv[0]))]
    try:
        host = socket.gethostname()
    except OSError:
        host = ""
    if len(host) >= 4 and host != "localhost":
        out.append(("host name", re.compile(r"(?<![\w-])" + re.escape(host) + r"(?![\w-])")))
    try:
        user = getpass.getuser()
    except Exception:  # noqa: BLE001 - no user name to look for
        user = ""
    if user:
        u = re.escape(user)
        out.append(("user name", re.compile(rf"(?<![\w.-]){u}@|~{u}(?![\w.-])|/home/{u}(?![\w.-])")))
    return out


def environment_dependent(texts: list[str | None], patterns: Sequence[tuple[str, re.Pattern[str]]]) -> str | None:
    """The first environment label found in ``texts`` (:func:`environment_patterns`)."""
    for text in texts:
        if not text:
            continue
        for label, pattern in patterns:
            if pattern.search(text):
                return label
    return None


def _answer_candidates(it: Item, runs: list[dict[str, RenderedValue]], sympy: bool,
                       environment: Sequence[tuple[str, re.Pattern[str]]] = ()
                       ) -> tuple[list[AnswerCandidate], tuple[str, str] | None]:
    """Answer texts to verify, best first: the actual operand's runtime value as a literal
    (or sympy text), the masked operand's runtime value, then the original masked text when
    its form passes funnel 2. The answer always comes from execution: text is only kept if
    substituting it makes the assertion pass."""
    choice = it.choice
    assert isinstance(choice, dvp.Choice)
    actual = [a for a in (r.get(str(choice.actual)) for r in runs) if a]
    expected = [e for e in (r.get(str(choice.masked)) for r in runs) if e]
    if len(actual) < len(runs):
        return [], ("execution", "assertion_not_reached")
    kinds = {json.dumps(sorted((k, v) for k, v in a.items() if k in ("literal", "sympy", "type"))) for a in actual}
    if len(kinds) > 1:
        return [], (dvp.SEMANTIC, f"multiple_values: {len(runs)} executions disagree")
    value, masked_value = actual[0], runs[0].get(str(choice.masked))  # None: the expected side was not rendered
    where = environment_dependent([t for r in actual + expected for t in (r.get("literal"), r.get("sympy"))],
                                  environment)
    if where:
        return [], (dvp.SEMANTIC, f"environment_dependent: the value holds the build's {where}")
    out: list[AnswerCandidate] = []
    ungradable: list[str] = []

    def add(text: str | None, source: str, form: str, kind: str) -> None:
        if text is None or any(c["text"] == text for c in out):
            return
        try:
            tree = ast.parse(text, mode="eval")
        except SyntaxError:
            return
        local = sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} & it.function.local_names)
        if kind != "python-literal" and local:  # `error.expr`: names an object only the test has
            ungradable.append(f"local_object: {text[:200]} names the test's own local {local[0]!r}")
            return
        # An answer the grader refuses (a dunder attribute; a sympy relation its parser does not
        # take) could never be graded correct: it is not offered.
        if kind == "sympy":
            from execbench.families.repo.grading import sympy_parse

            try:
                sympy_parse.parse_sympy(text)
            except sympy_parse.SympyParseError as exc:
                ungradable.append(str(exc))
                return
        else:
            from execbench.families.repo.grading.compare import Refused, parse_answer

            try:
                parse_answer(text)
            except (Refused, RecursionError) as exc:
                ungradable.append(str(exc))
                return
        out.append({"text": text, "source": source, "form": form, "kind": kind, "type": value.get("type")})

    add(value.get("literal"), "runtime-value", "literal", "python-literal")
    if sympy:
        add(value.get("sympy"), "runtime-value", "sympy_expression", "sympy")
    if masked_value is not None:
        add(masked_value.get("literal"), "runtime-value (expected operand)", "literal", "python-literal")
        if sympy:
            add(masked_value.get("sympy"), "runtime-value (expected operand)", "sympy_expression", "sympy")
    if not choice.variable and choice.form.priority > 0:
        _add_text(add, it.module.source, it.assertion.operands[choice.masked], choice.form, "test-text (verified)")
    definitions = _definitions(it)
    if len(definitions) == 1 and definitions[0][1].priority in (2, 3, 4):
        # `expected = URL("http://a")` ... `assert url == expected`: the expression that defined
        # the variable, hidden from the prompt, verified; after the runtime literal, so it is the
        # answer only when the value has no literal form (or its literal does not pass).
        node, form = definitions[0]
        _add_text(add, it.module.source, node, form, "test-text (definition of the variable, verified)")
    if it.assertion.op == "is":  # identity: only singletons, never a fresh object (literal or constructed)
        kept = [c for c in out if (c["kind"] != "python-literal" or c["text"] in ("None", "True", "False", "..."))
                and c["form"] != "constructor"]
        if out and not kept:
            return [], (dvp.MORPHOLOGY, "identity_with_non_singleton_value")
        out = kept
    clean = [c for c in out if not dvp.memory_address(c["text"])]
    if out and not clean:
        return [], (dvp.SEMANTIC, "memory_address")
    if not clean:
        if ungradable:
            first = ungradable[0]
            return [], (dvp.MORPHOLOGY, first if first.startswith("local_object") else f"answer_not_gradable: {first}")
        if choice.variable:
            return [], (dvp.MORPHOLOGY, f"pure_variable_reference: no literal form for {value.get('type')}")
        if value.get("too_big"):
            return [], (dvp.MORPHOLOGY, "value_too_large")
        return [], (dvp.MORPHOLOGY, f"no_literal_form:{value.get('type')}")
    if ungradable:  # if none of the others passes, the refused text was the answer
        clean = [AnswerCandidate(**c, refused_other=ungradable[0]) for c in clean]
    return clean, None


def _literal_value(text: str | None) -> tuple[bool, Any]:
    """(ok, value) of a literal text rendered by the plugin or written in the test."""
    if not text or len(text) > 4000:
        return False, None
    try:
        return True, ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def _wrong_values(runs: list[dict[str, RenderedValue]], it: Item, sympy: bool, cands: list[AnswerCandidate]
                  ) -> tuple[list[str], dict[str, str]]:
    """The admission gate's wrong answers: a few values of the answer's type that differ from
    it (int ± 1, the other bool, a dropped or added element, ...) and an unrelated sentinel
    object. None of them may pass the assertion when substituted. The second result maps a
    wrong text whose difference is only known at run time (sympy ``(A) + 1``: ``oo + 1`` is
    ``oo``) to the expression that checks it differs."""
    choice = it.choice
    assert isinstance(choice, dvp.Choice)
    out: list[str] = []
    guards: dict[str, str] = {}
    literal = next((_literal(r, k) for k in (choice.actual, choice.masked) for r in runs[:1] if _literal(r, k)), None)
    ok, value = _literal_value(literal)
    if ok:
        for wrong in _same_type_variants(value):
            text = _stable_repr(wrong)
            if text != literal and len(text) <= 4000 and text not in out:
                out.append(text)
    elif sympy and cands and cands[0]["kind"] == "sympy":
        answer = cands[0]["text"]
        for wrong in (f"({answer}) + 1", f"-({answer})"):
            out.append(wrong)
            guards[wrong] = f"not (({wrong}) == ({answer}))"
    out.append(f"{A.SENTINEL}()")
    return out, guards


def _stable_repr(value: Any) -> str:
    """``repr`` with set elements in a fixed order: a set's own order follows string hashing,
    which differs between builder processes, and the text is stored with the task."""
    if isinstance(value, (set, frozenset)):
        inner = ", ".join(sorted(_stable_repr(v) for v in value))
        if not value:
            return repr(value)
        return "{" + inner + "}" if type(value) is set else "frozenset({" + inner + "})"
    if isinstance(value, list):
        return "[" + ", ".join(_stable_repr(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + ", ".join(_stable_repr(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_stable_repr(k)}: {_stable_repr(v)}" for k, v in value.items()) + "}"
    return repr(value)


def _same_type_variants(v: Any) -> list[Any]:
    t = type(v)
    if v is None:
        return []
    if t is bool:
        return [not v]
    if t is int:
        return [v + 1, v - 1]
    if t is float:
        return [v + 1.0, v * 2 if v else 0.5]
    if t is complex:
        return [v + 1]
    if t is str:
        return [v + "x", v[:-1]] if v else ["x"]
    if t is bytes:
        return [v + b"x", v[:-1]] if v else [b"x"]
    if t in (list, tuple):
        out = [v[:-1], v + v[-1:]] if v else [t([0])]
        if len(v) > 1 and v[::-1] != v:
            out.append(v[::-1])
        return out
    if t is dict:
        if not v:
            return [{0: 0}]
        keys = list(v)
        return [{k: v[k] for k in keys[:-1]}, {**v, ("execbench",): 0}]
    if t in (set, frozenset):
        if not v:
            return [t({0})]
        first = sorted(v, key=repr)[0]
        return [t(v - {first}), t(v | {("execbench",)})]
    return []


def _readable_without_running(it: Item, runs: list[dict[str, RenderedValue]]) -> tuple[str, str] | None:
    """RepoReason's question is what the code under test computes: an actual operand that
    only indexes, slices or reads attributes of values written literally in the shown test
    (``assert ___ == alist[0]`` with ``alist = [...]``) has the answer on the page."""
    choice = it.choice
    assert isinstance(choice, dvp.Choice)
    node = it.assertion.operands[choice.actual]
    if not any(isinstance(n, (ast.Subscript, ast.Attribute)) for n in ast.walk(node)):
        return None  # a bare name: whether the code under test changed it is a real question
    literals: dict[str, Any] = {}
    assigned: dict[str, int] = defaultdict(int)
    for sub in ast.walk(it.function.node):
        for target in (sub.targets if isinstance(sub, ast.Assign) else [sub.target]
                       if isinstance(sub, (ast.AugAssign, ast.AnnAssign, ast.For, ast.NamedExpr)) else []):
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    assigned[name.id] += 1
        if (isinstance(sub, ast.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0], ast.Name)
                and dvp._is_literal(sub.value)):
            ok, value = _literal_value(A.segment(it.module.source, sub.value))
            if ok:
                literals[sub.targets[0].id] = value
    literals = {k: v for k, v in literals.items() if assigned[k] == 1}
    try:
        static = _static(node, literals)
    except _NotStatic:
        return None
    except Exception:  # noqa: BLE001 - indexing a literal the wrong way: not readable
        return None
    runtime = _literal(runs[0], choice.actual)
    try:
        from execbench.families.repo.grading.compare import Refused, parse_answer, same

        if runtime is None or not same(parse_answer(repr(static)[:5000]), parse_answer(runtime)):
            return None
    except (Refused, RecursionError, ValueError):
        return None
    return dvp.SEMANTIC, f"readable_without_running: {A.segment(it.module.source, node)[:80]} only reads literals of the test"


class _NotStatic(InternalError):
    pass


_DATA_ATTRIBUTES = {"real", "imag", "numerator", "denominator"}


def _static(node: ast.expr, names: dict[str, Any]) -> Any:
    """The value of an expression made of literals, names bound to literals, subscripts,
    slices and numeric data attributes; :class:`_NotStatic` for anything else."""
    if isinstance(node, ast.Name):
        if node.id not in names:
            raise _NotStatic
        return names[node.id]
    if dvp._is_literal(node):
        ok, value = _literal_value(ast.unparse(node))
        if not ok:
            raise _NotStatic
        return value
    if isinstance(node, ast.Subscript):
        return _static(node.value, names)[_static(node.slice, names)]
    if isinstance(node, ast.Slice):
        parts = [None if p is None else _static(p, names) for p in (node.lower, node.upper, node.step)]
        if not all(p is None or type(p) is int for p in parts):
            raise _NotStatic
        return slice(*parts)
    if isinstance(node, ast.Tuple):
        return tuple(_static(e, names) for e in node.elts)
    if isinstance(node, ast.Attribute) and node.attr in _DATA_ATTRIBUTES:
        base = _static(node.value, names)
        if type(base) not in (int, float, complex):
            raise _NotStatic
        return getattr(base, node.attr)
    raise _NotStatic


def spelling_variants(text: str) -> dict[str, str]:
    """Respellings of a constructor answer's arguments a reader would take as the same value,
    each to be checked by substitution in the verify run (the real type decides):
    ``iterable_argument`` (``C([5, 6])`` ↔ ``C((5, 6))``) and ``keyword_dict``
    (``C(u=1, x=4)`` ↔ ``C({'u': 1, 'x': 4})``). The passing rules are stored with the task
    (``provenance.answer_spellings``) and applied by the grader without executing anything."""
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return {}
    if not isinstance(node, ast.Call):
        return {}
    out = {}
    args, kwargs = node.args, node.keywords
    if len(args) == 1 and not kwargs and isinstance(args[0], (ast.List, ast.Tuple)):
        elts = args[0].elts
        swapped: ast.expr = (ast.Tuple(elts=elts, ctx=ast.Load()) if isinstance(args[0], ast.List)
                             else ast.List(elts=elts, ctx=ast.Load()))
        out["iterable_argument"] = ast.unparse(ast.Call(node.func, [swapped], []))
    if not args and kwargs and all(k.arg is not None for k in kwargs):
        as_dict = ast.Dict(keys=[ast.Constant(k.arg) for k in kwargs], values=[k.value for k in kwargs])
        out["keyword_dict"] = ast.unparse(ast.Call(node.func, [as_dict], []))
    if (len(args) == 1 and not kwargs and isinstance(args[0], ast.Dict) and args[0].keys
            and all(isinstance(k, ast.Constant) and isinstance(k.value, str) and k.value.isidentifier()
                    for k in args[0].keys)):
        keywords = [ast.keyword(k.value, v) for k, v in zip(args[0].keys, args[0].values)]  # type: ignore[union-attr]  # checked above: constants
        out["keyword_dict"] = ast.unparse(ast.Call(node.func, [], keywords))
    return out


def _dotted_names(text: str) -> list[str]:
    """Maximal dotted names (``toolz.functoolz.flip``, a constructor's callee) in an answer text."""
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return []
    inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    out = []
    for n in ast.walk(tree):
        if isinstance(n, (ast.Name, ast.Attribute)) and id(n) not in inner:
            parts = []
            cur: ast.expr = n
            while isinstance(cur, ast.Attribute):
                parts.append(cur.attr)
                cur = cur.value
            if isinstance(cur, ast.Name) and cur.id not in ("None", "True", "False"):
                out.append(".".join([cur.id, *reversed(parts)]))
    return out


def _add_text(add: Callable[..., None], source: str, node: ast.expr, form: dvp.Form, origin: str) -> None:
    text = A.segment(source, node)
    text = " ".join(text.split()) if "\n" in text else text
    add(text, origin, form.name, "python-literal" if form.priority == 1 else "sympy" if form.priority == 5 else "text")


def _trace(p: Pending) -> TraceSummary:
    """The probe run's trace of a pending assertion's test (it passed :func:`_traced_test_function`)."""
    trace = p.record.get("trace")
    assert trace is not None
    return trace


def _disambiguate(admitted: list[Pending], outcome: Outcome) -> None:
    """Instances of one test function (parametrised or inherited) that show the same test
    text and the same input parameters must have the same answer, else none is kept."""
    groups: dict[tuple, list[Pending]] = defaultdict(list)
    for p in admitted:
        args = json.dumps(_trace(p).get("args", {}), sort_keys=True)
        groups[(p.item.key, args)].append(p)
    for group in groups.values():
        if len({p.answer["text"] for p in group if p.answer is not None}) > 1:
            for p in group:
                p.dropped = True
                outcome.reject(p.label, dvp.SEMANTIC,
                               "ambiguous_parameters: instances with the same inputs have different answers",
                               **p.base)


def _definitions(it: Item) -> list[tuple[ast.expr, dvp.Form]]:
    """Right-hand sides assigned to the question's variable in the test function (none when
    the expected operand is not a plain variable), with their funnel-2 form."""
    choice = it.choice
    assert isinstance(choice, dvp.Choice)
    if not choice.variable:
        return []
    name = it.assertion.operands[choice.masked].id  # type: ignore[attr-defined]  # ast.AST declares no fields; the node is a kind that has it
    return [(node.value, dvp.classify(node.value, it.function.local_names)) for node in ast.walk(it.function.node)
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)]
