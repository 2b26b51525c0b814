"""Slices computable by hand, on real traces of tests/slicing/synthetic_program.py.

The program is traced through the sandbox (``execbench.tracing.trace_calls``), each test
function as its own call, calls recorded to depth 3 as for the repo family.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from execbench.slicing import AnalysisCache, SliceError, slice_metrics
from execbench.slicing import analysis as slicing_analysis
from execbench.tracing import TraceLimits, trace_calls

PROGRAM = (Path(__file__).parent / "synthetic_program.py").read_text()
LINES = PROGRAM.splitlines()
TESTS = ["test_locals", "test_control", "test_return", "test_untraced", "test_dfi",
         "test_masked", "test_mutation", "test_loop"]


def line_of(text: str) -> int:
    """1-based line number of the unique program line whose stripped text is ``text``."""
    hits = [i for i, line in enumerate(LINES, 1) if line.strip() == text]
    assert len(hits) == 1, (text, hits)
    return hits[0]


@pytest.fixture(scope="module")
def traces() -> dict[str, list[dict]]:
    run = trace_calls(PROGRAM, [f"{name}()" for name in TESTS], record_calls=True,
                      trace_limits=TraceLimits(max_depth=3))
    assert run.ok, run.reason()
    out = {}
    for name, result in zip(TESTS, run.value["calls"]):
        assert result["status"] == "ok", result
        out[name] = result["calls"]
    return out


def sliced(traces, name: str, assertion: str, expr: str) -> dict:
    calls = traces[name]
    file = calls[0]["file"]
    return slice_metrics(calls, {file: PROGRAM},
                         {"file": file, "line": line_of(assertion), "expr": expr})


def trace_one(program: str, call: str) -> tuple[list[dict], str]:
    """Call records of one traced call (depth 3, as for the repo family) and the program's path."""
    run = trace_calls(program, [call], record_calls=True, trace_limits=TraceLimits(max_depth=3))
    assert run.ok and run.value["calls"][0]["status"] == "ok", run.reason()
    calls = run.value["calls"][0]["calls"]
    return calls, calls[0]["file"]


def lines(result: dict) -> list[int]:
    (only,) = result["relevant_lines"].values()
    return only


def test_data_dependence_through_locals(traces):
    r = sliced(traces, "test_locals", "assert z == 4", "4")
    assert lines(r) == [line_of("x = 3"), line_of("z = x + 1"), line_of("assert z == 4")]
    assert r["relevant_calls"] == [0]
    assert (r["esv"], r["mcl"], r["dfi"]) == (6, 3, 0)  # 6 lines of test_locals, 3 executions


def test_control_dependence_on_an_if(traces):
    r = sliced(traces, "test_control", "assert r == 10", "10")
    # r = 0 is overwritten (not in the slice); the if decides which r is assigned; k is noise
    assert lines(r) == [line_of("if flag:"), line_of("r = 10"), line_of("assert r == 10")]
    assert r["source_variables"] == ["flag"]  # a parameter: read, never written
    assert (r["mcl"], r["dfi"]) == (3, 1)


def test_return_value_propagates_into_the_callee(traces):
    r = sliced(traces, "test_return", "assert v == 3", "3")
    assert r["relevant_calls"] == [0, 1]
    # helper: t = a * 2 and return t + 1 are relevant, u = b + 100 is not
    assert lines(r) == [line_of("t = a * 2"), line_of("return t + 1"),
                        line_of("v = helper(1, 2)"), line_of("assert v == 3")]
    assert r["source_variables"] == ["a"]  # b is never read by a relevant line
    assert r["untraced_calls"] == []
    assert (r["esv"], r["mcl"], r["dfi"]) == (4 + 3, 4, 1)


def test_untraced_builtin_calls_are_recorded(traces):
    r = sliced(traces, "test_untraced", "assert len(s) == 3", "3")
    got = [(u["caller"], u["line"], u["name"]) for u in r["untraced_calls"]]
    assert got == [(0, line_of("s = sorted([3, 1, 2])"), "sorted"),
                   (0, line_of("assert len(s) == 3"), "len")]
    assert r["relevant_calls"] == [0]


def test_dfi_excludes_builtins_imports_and_callees(traces):
    text = 'a = CONST + n + math.floor(1.5) + len("ab") + reduce(max, [1, 2])'
    r = sliced(traces, "test_dfi", "assert a == 14", "14")
    # math: a module import; len, max: builtins; reduce: a callee; a: written
    assert r["source_variables"] == ["CONST", "n"]
    assert r["dfi"] == 2
    assert lines(r) == [line_of(text), line_of("assert a == 14")]


def test_masked_expression_is_not_a_criterion(traces):
    r = sliced(traces, "test_masked", "assert make_pair(1) == Pair(1, 2)", "Pair(1, 2)")
    calls = {c["id"]: c for c in traces["test_masked"]}
    funcs = sorted(calls[i]["func"] for i in r["relevant_calls"])
    # make_pair -> Pair.__init__ and the comparison's __eq__ are relevant; the
    # Pair.__init__ that builds the masked answer Pair(1, 2) is not
    assert funcs == ["Pair.__eq__", "Pair.__init__", "make_pair", "test_masked"]
    masked_init = [c["id"] for c in calls.values()
                   if c["func"] == "Pair.__init__" and c["parent"] == 0]
    assert masked_init and masked_init[0] not in r["relevant_calls"]
    assert r["source_variables"] == ["a", "b", "n", "other", "self"]


def test_in_place_mutation_is_a_definition(traces):
    r = sliced(traces, "test_mutation", "assert items == [7, 1]", "[7, 1]")
    assert lines(r) == [line_of("items = []"), line_of("items.append(CONST)"),
                        line_of("items.append(1)"), line_of("assert items == [7, 1]")]
    assert r["source_variables"] == ["CONST"]


def test_loop_counts_every_execution(traces):
    r = sliced(traces, "test_loop", "assert total == 6", "6")
    assert r["relevant_calls"] == [0, 1, 2]  # two helper calls (i = 0 and i = 2)
    loop = [line_of("total = 0"), line_of("for i in range(n):"), line_of("if i == 1:"),
            line_of("total += helper(i, 0)"), line_of("assert total == 6")]
    assert lines(r) == sorted([line_of("t = a * 2"), line_of("return t + 1"), *loop])
    # 1 + 4 loop tests + 3 ifs + 2 additions + 1 assert, and 2 lines x 2 helper calls
    assert r["mcl"] == 1 + 4 + 3 + 2 + 1 + 4
    assert r["source_variables"] == ["a", "n"]


def test_call_line_in_records_is_used_exactly():
    source = "def f(x):\n    return x\n\n\ndef test():\n    a = f(1)\n    b = f(2)\n    assert b == 2\n"
    calls = [
        {"id": 0, "parent": None, "func": "test", "file": "t.py", "firstlineno": 5,
         "depth": 0, "lines": [6, 7, 8]},
        {"id": 1, "parent": 0, "func": "f", "file": "t.py", "firstlineno": 1, "depth": 1,
         "lines": [2], "call_line": 6},
        {"id": 2, "parent": 0, "func": "f", "file": "t.py", "firstlineno": 1, "depth": 1,
         "lines": [2], "call_line": 7},
    ]
    r = slice_metrics(calls, {"t.py": source}, {"file": "t.py", "line": 8, "expr": "2"})
    assert r["relevant_calls"] == [0, 2]
    calls[2]["call_line"] = 6  # now both calls claim line 6: b's call is untraced
    r = slice_metrics(calls, {"t.py": source}, {"file": "t.py", "line": 8, "expr": "2"})
    assert r["relevant_calls"] == [0]
    assert [u["name"] for u in r["untraced_calls"]] == ["f"]


def test_assertion_not_executed_is_an_error():
    calls = [{"id": 0, "parent": None, "func": "test", "file": "t.py", "firstlineno": 1,
              "depth": 0, "lines": [2]}]
    with pytest.raises(SliceError):
        slice_metrics(calls, {"t.py": "def test():\n    x = 1\n    assert x\n"},
                      {"file": "t.py", "line": 3, "expr": "x"})


def test_analysis_cache_analyses_a_function_once(monkeypatch):
    """A 300-statement function with a 20k-event trace: analysed once for two slices."""
    body = "".join(f"    v{i} = v{i - 1} + {i}\n" for i in range(1, 300))
    source = f"def test():\n    v0 = 0\n{body}    for k in range(20000 // 3):\n" \
             f"        v0 += k\n    assert v299 + v0 == 0\n"
    n = source.count("\n")
    loop = [n - 2, n - 1] * (20000 // 3)
    calls = [{"id": 0, "parent": None, "func": "test", "file": "big.py", "firstlineno": 1,
              "depth": 0, "lines": list(range(2, n - 2)) + loop + [n - 2, n]}]
    cache = AnalysisCache()
    target = {"file": "big.py", "line": n, "expr": "0"}
    analysed = []
    real_analyse = slicing_analysis.analyse
    monkeypatch.setattr(slicing_analysis, "analyse", lambda *a: analysed.append(a[2]) or real_analyse(*a))
    first = slice_metrics(calls, {"big.py": source}, target, cache=cache)
    second = slice_metrics(calls, {"big.py": source}, target, cache=cache)
    assert first == second
    assert first["esv"] == n
    assert analysed == ["test"]  # the second run took the function's analysis from the cache


def test_except_as_handler_is_sliced():
    """gast gives the name of `except E as e` no end line: it must not crash the analysis."""
    program = ("def parse(s):\n    try:\n        return int(s)\n    except ValueError as e:\n"
               "        return len(str(e))\n\n\ndef test_parse():\n    n = parse('x')\n    assert n == 43\n")
    calls, file = trace_one(program, "test_parse()")
    r = slice_metrics(calls, {file: program}, {"file": file, "line": 10, "expr": "43"})
    assert sorted(calls[i]["func"] for i in r["relevant_calls"]) == ["parse", "test_parse"]
    assert r["relevant_lines"][file] == [2, 3, 4, 5, 9, 10]


def test_multi_line_assertion_is_anchored_by_any_of_its_lines():
    """`assert (\\n  LITERAL\\n  == f(x)\\n)`: Python's line events skip the `assert (` line
    (yarl's test_bytes, jinja2's test_chainable_undefined); the statement's span anchors it."""
    program = ("def f(x):\n    return x * 2\n\n\ndef test_f():\n    x = 21\n    assert (\n"
               "        42\n        == f(x)\n    )\n")
    calls, file = trace_one(program, "test_f()")
    assert 7 not in calls[0]["lines"]  # the premise: the first line of the statement never fires
    with pytest.raises(SliceError):
        slice_metrics(calls, {file: program}, {"file": file, "line": 7, "expr": "42"})
    r = slice_metrics(calls, {file: program}, {"file": file, "line": 7, "end_line": 10, "expr": "42"})
    assert sorted(calls[i]["func"] for i in r["relevant_calls"]) == ["f", "test_f"]
    assert r["relevant_lines"][file] == [2, 6, 8, 9]  # lines with events: 7 and 10 never fire


def test_bounded_analysis_cache_evicts_the_least_recently_used_and_slices_the_same(monkeypatch):
    """The process-wide cache of the repo family (``slice_cache``) is bounded: past its limit the
    least recently used module goes, is parsed again when asked for, and slices do not change."""
    programs = {f"m{i}.py": f"def f{i}(x):\n    y = x + {i}\n    return y\n\n\ndef test_{i}():\n    assert f{i}(1) == {i + 1}\n"
                for i in range(3)}
    parsed = []
    real_parse = slicing_analysis._Module.parse
    monkeypatch.setattr(slicing_analysis._Module, "parse", staticmethod(lambda source: parsed.append(source) or real_parse(source)))
    bounded, unbounded = AnalysisCache(modules=2, codes=2), AnalysisCache()
    results = []
    for file in ["m0.py", "m1.py", "m0.py", "m2.py", "m1.py"]:
        calls, traced = trace_one(programs[file], f"test_{file[1]}()")
        calls = [{**c, "file": file} for c in calls if c["file"] == traced]
        target = {"file": file, "line": 7, "expr": str(int(file[1]) + 1)}
        mine = slice_metrics(calls, {file: programs[file]}, target, cache=bounded)
        assert mine == slice_metrics(calls, {file: programs[file]}, target, cache=unbounded)
        results.append(mine["esv"])
    assert results == [5, 5, 5, 5, 5]  # each slice: the test and f_i, every line of both
    # bounded: m0, m1, m0 (hit, now newest), m2 (evicts m1), m1 again (parsed again) -> 4 parses; unbounded: 3
    assert len(parsed) == 4 + 3
    assert len(bounded._modules) == 2 and len(bounded._codes) == 2


def test_repo_builds_share_one_analysis_cache_per_process():
    from execbench.families.repo.records.slicing_metrics import SHARED_CODES, SHARED_MODULES, slice_cache

    cache = slice_cache()
    assert cache is slice_cache()
    assert (cache._module_limit, cache._code_limit) == (SHARED_MODULES, SHARED_CODES)
