"""The difficulty gate: a task's own Score over its assertion's dynamic slice, and trivial reads.

``metrics.assertion_score`` (the test function's Score formula over the assertion's own slice)
and the ``trivial`` check (a plain read of a few plain library lines): docs/repo-family.md,
"Fairness gates". Split out of :mod:`.build`.
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, Any, Sequence

from execbench.contract import Outcome
from execbench.families.repo.records.slicing_metrics import fill_metrics
from execbench.families.repo.records.steps import DEFAULT_OPTIONS, Module, Pending, RepoOptions
from execbench.families.repo.selection import assertions as A
from execbench.families.repo.selection import dvp
from execbench.families.repo.verification.answers import _trace

if TYPE_CHECKING:
    from execbench.families.repo.records.run_records import CallJson
    from execbench.families.repo.records.slicing_metrics import SliceResult


def assertion_difficulty(sliced: SliceResult, calls: list[CallJson], test_files: set[str]
                         ) -> tuple[float, int, bool]:
    """(Score, library lines, nested call) of an assertion's own dynamic slice: RepoReason's
    §3.4 Score with files, functions, calls and depth counted over the slice's relevant calls
    (not the whole test function); the number of relevant lines outside the test modules;
    and whether a relevant call lies deeper than depth 1 (a library call calling code)."""
    by_id = {c.get("id"): c for c in calls}
    relevant = [by_id[i] for i in sliced.get("relevant_calls") or [] if i in by_id]
    files = {c["file"] for c in relevant}
    funcs = {(c["file"], c.get("firstlineno"), c.get("func")) for c in relevant}
    depth = max((c.get("depth", 0) for c in relevant), default=0)
    score = (len(files) / 4) * 0.1 + (len(funcs) / 15) * 0.2 + (len(relevant) / 30) * 0.5 + (depth / 4) * 0.2
    library_lines = sum(len(lines) for f, lines in (sliced.get("relevant_lines") or {}).items() if f not in test_files)
    deeper = any(c.get("depth", 0) > 1 and c["file"] not in test_files for c in relevant)
    return score, library_lines, deeper


def read_after_construction(function: A.TestFunction, assertion: A.Assertion, actual: ast.expr,
                            texts: Sequence[str] = ()) -> str | None:
    """Why the asked expression is a trivial read, or None:

    * ``len(N)`` or ``N.attr`` right after ``N = C(...)`` (the last statement of the test that
      mentions ``N``, assertions included), where for ``N.attr`` some ``self.attr = <literal>``
      stands in ``texts`` (the test module and the traced library files): a constructor's default
      (``car = Car()`` then ``car.hand_count == ___``);
    * ``N.attr`` right after ``N.attr = <literal>``: a value set one statement earlier;
    * ``len(C())``: the size of a fresh, argument-less construction (``len(FrozenDict())``)."""
    node = actual
    is_len = isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len" \
        and len(node.args) == 1 and not node.keywords
    if is_len:
        node = node.args[0]  # type: ignore[attr-defined]  # a len() call, checked above
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.args and not node.keywords:
            return "size of a fresh construction"
    attr = None
    if not is_len and isinstance(node, ast.Attribute):
        attr, node = node.attr, node.value
    if not isinstance(node, ast.Name) or node.id in ("self", "cls") or (not is_len and attr is None):
        return None
    name = node.id
    last = None
    for stmt in A._walk_body(function.node.body):
        if stmt.lineno >= assertion.line:
            break
        if isinstance(stmt, (ast.For, ast.While, ast.If, ast.With, ast.Try, ast.FunctionDef, ast.ClassDef,
                             ast.AsyncFunctionDef, ast.AsyncFor, ast.AsyncWith)):
            if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(stmt)):
                return None  # touched in a block: not a straight read
            continue
        if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(stmt)):
            last = stmt
    if last is None or not isinstance(last, ast.Assign) or len(last.targets) != 1:
        return None
    target, value = last.targets[0], last.value
    callee = value.func if isinstance(value, ast.Call) else None
    callee_name = callee.id if isinstance(callee, ast.Name) else callee.attr if isinstance(callee, ast.Attribute) else ""
    if isinstance(target, ast.Name) and target.id == name and callee_name[:1].isupper():  # a class: Car(), OMD(...)
        if is_len:
            return "size right after construction"
        default = re.compile(rf"\bself\.{re.escape(attr or '')}\s*=\s*(-?\d[\w.]*|None|True|False|''|\"\"|\[\]|\{{\}}|\(\))\s*($|#)",
                             re.M)
        if any(default.search(text) for text in texts):
            return "a constructor's default read right after construction"
        return None
    if (attr is not None and isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
            and target.value.id == name and target.attr == attr and dvp._is_literal(value)):
        return "value set one statement earlier"
    return None


def plain_read(node: ast.expr) -> bool:
    """The asked expression only reads: names, attribute chains, ``len(...)`` of one, and
    calls without arguments (``car.hand_count``, ``len(FrozenDict())``)."""
    if isinstance(node, ast.Name):
        return True
    if isinstance(node, ast.Attribute):
        return plain_read(node.value)
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name) and node.func.id == "len" and len(node.args) == 1 and not node.keywords:
            return plain_read(node.args[0])
        return not node.args and not node.keywords and isinstance(node.func, ast.Name)
    return False


_COMPUTING = (ast.Call, ast.BinOp, ast.BoolOp, ast.Compare, ast.Subscript, ast.ListComp, ast.SetComp, ast.DictComp,
              ast.GeneratorExp, ast.Lambda, ast.IfExp, ast.AugAssign, ast.For, ast.While, ast.UnaryOp)


def plain_lines(sliced: SliceResult, sources: dict[str, str], test_files: set[str]) -> bool:
    """Every relevant library line of the slice stores or returns a name, attribute or
    constant (``self.hand_count = 0``, ``return self._n``): nothing is computed there."""
    for rel, lines in (sliced.get("relevant_lines") or {}).items():
        if rel in test_files:
            continue
        text = sources.get(rel, "")
        source_lines = text.splitlines()
        for line in lines:
            if not 0 < line <= len(source_lines):
                return False
            stripped = source_lines[line - 1].strip()
            if stripped.startswith(("def ", "async def ", "class ", "@")):
                continue
            try:
                tree = ast.parse(stripped)
            except SyntaxError:
                return False
            if any(isinstance(n, _COMPUTING) for n in ast.walk(tree)):
                return False
    return True


def _metrics_unless_trivial(p: Pending, modules: list[Module], sliced: Any, calls: Any, sources: dict[str, str],
                            options: RepoOptions, outcome: Outcome) -> dict[str, float | int | None] | None:
    """The task's metrics (the trace's, the slice's, the assertion's own difficulty), or None when
    the difficulty gates reject the assertion (recorded in ``outcome``): ``trivial`` or an
    ``assertion_score`` below the threshold."""
    it, answer = p.item, p.answer
    assert answer is not None and isinstance(it.choice, dvp.Choice)
    module, function, assertion, choice = it.module, it.function, it.assertion, it.choice
    trace = _trace(p)
    stats = trace["stats"]
    metrics: dict[str, float | int | None] = {
        "complexity_score": trace["score"], "n_files": stats["files"], "n_funcs": stats["funcs"],
        "n_calls": stats["calls"], "max_depth": stats["depth"], "answer_chars": len(answer["text"]),
        "esv": None, "mcl": None, "dfi": None, "slice_files": None,
        "assertion_score": None, "slice_library_lines": None,
    }
    fill_metrics(metrics, sliced)
    if sliced:
        test_files = {m.rel for m in modules}
        score, library_lines, deeper = assertion_difficulty(sliced, calls, test_files)
        metrics["assertion_score"], metrics["slice_library_lines"] = round(score, 4), library_lines
        threshold = float(options.get("assertion_threshold", DEFAULT_OPTIONS["assertion_threshold"]))
        why = read_after_construction(function, assertion, assertion.operands[choice.actual],
                                      [module.source, *sources.values()])
        if why is None and (1 <= library_lines <= int(options.get("trivial_lines", DEFAULT_OPTIONS["trivial_lines"]))
                            and not deeper and plain_read(assertion.operands[choice.actual])
                            and plain_lines(sliced, sources, test_files)):
            why = f"a plain read of {library_lines} library line(s) that compute nothing, no nested call"
        if why is not None:
            outcome.reject(p.label, "difficulty", f"trivial: {why}", answer=answer["text"],
                           assertion_score=round(score, 4), **p.base)
            return None
        if score < threshold:
            outcome.reject(p.label, "difficulty", f"assertion_score: {score:.3f} < {threshold} over the "
                           "assertion's own slice", answer=answer["text"], **p.base)
            return None
    return metrics
