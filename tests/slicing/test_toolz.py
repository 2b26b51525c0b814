"""Appendix F.5 of the RepoReason paper: toolz ``test_accumulate``.

toolz 1.2.0 (a test dependency; its wheel ships its tests) is traced through the sandbox
by a small driver that runs ``test_accumulate`` under ``Tracer(files=<toolz files>,
limits=TraceLimits(max_depth=3), record_calls=True)``. The paper reports ESV 59, MCL 35,
DFI 3 without saying which assertion was masked; docs/slicing.md explains the
differences.

The expected slices are derived by reading the source, not taken from the slicer: the
lines are found by their text, each line's execution count follows from the inputs (and
is checked against the tracer's own line events), ESV counts the code lines of the two
functions, DFI the names read and never assigned in the slice (see docs/slicing.md, F.4).
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
from collections import Counter
from pathlib import Path

import pytest

from execbench import sandbox
from execbench.slicing import AnalysisCache, slice_metrics

PAPER = {"esv": 59, "mcl": 35, "dfi": 3}

DRIVER = r'''
import json, os, sys
import toolz
from toolz.tests import test_itertoolz as module
from execbench.tracing.tracer import TraceLimits, Tracer

root = os.path.dirname(os.path.abspath(toolz.__file__))
files = [os.path.abspath(module.__file__)]
for folder, _, names in os.walk(root):
    files += sorted(os.path.join(folder, n) for n in names if n.endswith(".py"))
tracer = Tracer(files, limits=TraceLimits(max_depth=3), record_calls=True)
test = getattr(module, sys.argv[1])
tracer.start()
try:
    test()
finally:
    tracer.stop()
with open("calls.json", "w") as fh:
    json.dump({"root": root, "trace": tracer.result()}, fh)
'''

def traced(test_name: str) -> tuple[list[dict], dict[str, str]]:
    """Call records and sources of one toolz test traced in the sandbox."""
    spec = importlib.util.find_spec("toolz")  # locates the package without importing it
    if spec is None or spec.origin is None:
        pytest.skip("toolz is not installed (pip install -e '.[test]')")
    from importlib.metadata import version
    assert version("toolz") == "1.2.0"
    outcome = sandbox.run_python(["driver.py", test_name],
                                 files={"driver.py": DRIVER}, collect=["calls.json"],
                                 limits=sandbox.Limits(cpu_seconds=60, wall_seconds=120))
    assert outcome.limit is None and "calls.json" in outcome.files, (
        outcome.reason(), outcome.stderr[-2000:])
    data = json.loads(outcome.files["calls.json"])
    assert data["trace"]["status"] == "ok"
    calls = data["trace"]["calls"]
    sources = {f: Path(f).read_text() for f in {c["file"] for c in calls}}
    return calls, sources


@pytest.fixture(scope="module")
def trace() -> tuple[list[dict], dict[str, str]]:
    return traced("test_accumulate")


def test_trace_shape(trace):
    calls, _ = trace
    assert calls[0]["func"] == "test_accumulate" and calls[0]["depth"] == 0
    # six accumulate generators, one per assertion, nothing deeper is in toolz
    assert [c["func"] for c in calls[1:]] == ["accumulate"] * 6
    assert all(c["parent"] == 0 for c in calls[1:])


def code_lines(text: str, name: str) -> tuple[int, dict[str, list[int]]]:
    """(ESV share, {stripped line text: [line numbers]}) of the function ``name``: its span
    from ``def`` to its last line (no decorators here), lines neither blank nor only a comment."""
    node = next(n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.FunctionDef) and n.name == name)
    lines = text.splitlines()
    where: dict[str, list[int]] = {}
    count = 0
    for number in range(node.lineno, node.end_lineno + 1):
        stripped = lines[number - 1].strip()
        if stripped and not stripped.startswith("#"):
            count += 1
            where.setdefault(stripped, []).append(number)
    return count, where


# accumulate (toolz/itertoolz.py):
#     seq = iter(seq)
#     if initial == no_default:
#         try:
#             result = next(seq)
#         except StopIteration:
#             return
#     else:
#         result = initial
#     yield result
#     for elem in seq:
#         result = binop(result, elem)
#         yield result
#
# Every statement it executes feeds the generator's output (what list() returns), so its
# slice is every executed line. Execution counts, for a sequence of n elements:
#   no initial, n >= 1: the four lines up to next() once, the first yield once, the loop
#     header n times (n - 1 iterations and the test that ends it), its two lines n - 1 times;
#   initial given (not equal to no_default): iter, the if, result = initial, the first
#     yield once; the header n + 1 times, its two lines n times;
#   no initial, n = 0: iter, the if, try, next, except, return once each.
# no_default2 is a pickled copy of the string no_default, so `initial == no_default` holds
# for it: the no-initial path.
def accumulate_counts(path: str, n: int) -> dict[str, int]:
    if path == "no initial":
        return {"seq = iter(seq)": 1, "if initial == no_default:": 1, "try:": 1, "result = next(seq)": 1,
                "yield result#1": 1, "for elem in seq:": n, "result = binop(result, elem)": n - 1,
                "yield result#2": n - 1}
    if path == "initial":
        return {"seq = iter(seq)": 1, "if initial == no_default:": 1, "result = initial": 1, "yield result#1": 1,
                "for elem in seq:": n + 1, "result = binop(result, elem)": n, "yield result#2": n}
    assert path == "empty"
    return {"seq = iter(seq)": 1, "if initial == no_default:": 1, "try:": 1, "result = next(seq)": 1,
            "except StopIteration:": 1, "return": 1}


# Each assertion: (masked expression, accumulate's path, n, lines of the test function in the
# slice besides the assertion, the slice's source variables S). In the test function the
# criterion reads the call's arguments (not the masked expression): `add`/`mul` and
# `no_default2` are module-level names (from-imports and a global) read and never assigned:
# sources; `binop` and `start` are assigned in the test (`def binop`, `start = object()`),
# so those statements join the slice and the names are not sources; `list`, `object` are
# builtins and `accumulate` is called. In accumulate, `initial` (a parameter) and
# `no_default` (imported) are read by the if and never assigned; `seq` is reassigned by
# `seq = iter(seq)`, `binop` only called, `result` and `elem` assigned.
CASES = {
    "assert list(accumulate(add, [1, 2, 3, 4, 5])) == [1, 3, 6, 10, 15]":
        ("[1, 3, 6, 10, 15]", "no initial", 5, [], {"add", "initial", "no_default"}),
    "assert list(accumulate(mul, [1, 2, 3, 4, 5])) == [1, 2, 6, 24, 120]":
        ("[1, 2, 6, 24, 120]", "no initial", 5, [], {"mul", "initial", "no_default"}),
    "assert list(accumulate(add, [1, 2, 3, 4, 5], -1)) == [-1, 0, 2, 5, 9, 14]":
        ("[-1, 0, 2, 5, 9, 14]", "initial", 5, [], {"add", "initial", "no_default"}),
    "assert list(accumulate(binop, [], start)) == [start]":
        ("[start]", "initial", 0, ["def binop(a, b):", "start = object()"], {"initial", "no_default"}),
    "assert list(accumulate(binop, [])) == []":
        ("[]", "empty", 0, ["def binop(a, b):"], {"initial", "no_default"}),
    "assert list(accumulate(add, [1, 2, 3], no_default2)) == [1, 3, 6]":
        ("[1, 3, 6]", "no initial", 3, [], {"add", "initial", "no_default", "no_default2"}),
}


def test_every_assertion_against_a_hand_derived_slice(trace):
    calls, sources = trace
    test_file = calls[0]["file"]
    itertoolz = os.path.join(os.path.dirname(os.path.dirname(test_file)), "itertoolz.py")
    test_esv, test_lines = code_lines(sources[test_file], "test_accumulate")
    acc_esv, acc_lines = code_lines(sources[itertoolz], "accumulate")
    first_yield, second_yield = acc_lines["yield result"]
    acc_lines["yield result#1"], acc_lines["yield result#2"] = [first_yield], [second_yield]
    cache = AnalysisCache()
    for call_id, (assertion, (expr, path, n, extra, sources_s)) in enumerate(CASES.items(), start=1):
        [line] = test_lines[assertion]
        r = slice_metrics(calls, sources, {"file": test_file, "line": line, "expr": expr}, cache=cache)
        counts = {acc_lines[text][0]: times for text, times in accumulate_counts(path, n).items() if times}
        # the hand counts are the tracer's own line events of this accumulate call
        assert {k: v for k, v in Counter(calls[call_id]["lines"]).items()} == counts, assertion
        test_side = sorted([line] + [test_lines[text][0] for text in extra])
        assert r["relevant_calls"] == [0, call_id], assertion
        assert r["relevant_lines"] == {itertoolz: sorted(counts), test_file: test_side}, assertion
        assert r["esv"] == test_esv + acc_esv == 43, assertion  # both functions are read whole
        assert r["mcl"] == len(test_side) + sum(counts.values()), assertion  # each test line ran once
        assert r["source_variables"] == sorted(sources_s) and r["dfi"] == len(sources_s), assertion
        # invariants: every relevant line ran (MCL >= their number), and lies in a relevant
        # function's span (their number <= ESV)
        distinct = sum(len(v) for v in r["relevant_lines"].values())
        assert distinct <= r["mcl"] and distinct <= r["esv"]


def test_paper_example_first_assertion(trace):
    """The paper's F.5 evidence matches the first assertion: DFI 3 = {add, initial,
    no_default}. ESV and MCL differ (docs/slicing.md)."""
    calls, sources = trace
    test_file = calls[0]["file"]
    _, test_lines = code_lines(sources[test_file], "test_accumulate")
    [line] = test_lines["assert list(accumulate(add, [1, 2, 3, 4, 5])) == [1, 3, 6, 10, 15]"]
    r = slice_metrics(calls, sources, {"file": test_file, "line": line, "expr": "[1, 3, 6, 10, 15]"})
    assert r["dfi"] == PAPER["dfi"] and r["source_variables"] == ["add", "initial", "no_default"]
    # calls the slice reaches but the trace does not hold: list() in the test; iter(), next()
    # and the binop parameter (operator.add, C code) in accumulate
    assert sorted((u["caller"], u["name"]) for u in r["untraced_calls"]) == [
        (0, "list"), (1, "binop"), (1, "iter"), (1, "next")]


# nth (toolz/itertoolz.py):
#     if isinstance(seq, (tuple, list, Sequence)):
#         return seq[n]
#     else:
#         return next(itertools.islice(seq, n, None))
# Either return is the criterion and the if controls it; both run once. The if and the
# returns read the parameters n and seq (never assigned) and Sequence (a from-import):
# sources; isinstance/next are called, tuple/list are builtins, itertools is a module
# import. The test line only calls nth and iter on literals: no source of its own.
def test_nth_both_branches_against_a_hand_derived_slice():
    calls, sources = traced("test_nth")
    test_file = calls[0]["file"]
    itertoolz = os.path.join(os.path.dirname(os.path.dirname(test_file)), "itertoolz.py")
    test_esv, test_lines = code_lines(sources[test_file], "test_nth")
    nth_esv, nth_lines = code_lines(sources[itertoolz], "nth")
    nth_calls = [c["id"] for c in calls if c["func"] == "nth"]
    header = nth_lines["if isinstance(seq, (tuple, list, Sequence)):"][0]
    cases = [("assert nth(2, 'ABCDE') == 'C'", "'C'", "return seq[n]"),  # a str is a Sequence
             ("assert nth(2, iter('ABCDE')) == 'C'", "'C'", "return next(itertools.islice(seq, n, None))")]
    for call_id, (assertion, expr, taken) in zip(nth_calls, cases):
        [line] = test_lines[assertion]
        r = slice_metrics(calls, sources, {"file": test_file, "line": line, "expr": expr})
        lines = sorted([header, nth_lines[taken][0]])
        assert Counter(next(c for c in calls if c["id"] == call_id)["lines"]) == dict.fromkeys(lines, 1)
        assert r["relevant_calls"] == [0, call_id]
        assert r["relevant_lines"] == {itertoolz: lines, test_file: [line]}
        assert r["esv"] == test_esv + nth_esv
        assert r["mcl"] == 3  # the test line, the if, the return: once each
        assert r["source_variables"] == ["Sequence", "n", "seq"] and r["dfi"] == 3
