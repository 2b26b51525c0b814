"""The in-process tracer: line events, calls, depth, generators, threads, caps."""

from __future__ import annotations

import textwrap
import threading

from execbench.tracing.summary import summarize
from execbench.tracing.tracer import TraceLimits, Tracer

ORIGINAL_THREAD_START = threading.Thread.start  # taken before any tracer runs in this process
ORIGINAL_THREAD_JOIN = threading.Thread.join

PROGRAM = textwrap.dedent(
    """\
    import threading

    def fact(n):
        if n <= 1:
            return 1
        return n * fact(n - 1)

    def gen(n):
        for i in range(n):
            yield i * 2

    def use_gen(n):
        total = sum(x for x in gen(n))
        squares = [x * x for x in range(n)]
        return total, squares

    def worker(out, k):
        out.append(k)

    def par(n):
        out = []
        threads = [threading.Thread(target=worker, args=(out, i)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return sorted(out)

    class Loud:
        def __repr__(self):
            raise RuntimeError("user repr must never be called")

    def take(obj, n):
        return n + 1

    def boom(n):
        try:
            raise ValueError(n)
        except ValueError:
            return -1
    """
)
FILE = "/virtual/program.py"


def run(call: str, **kwargs):
    namespace: dict = {"__name__": "prog"}
    exec(compile(PROGRAM, FILE, "exec"), namespace)  # noqa: S102 - the test's own program
    tracer = Tracer([FILE], **kwargs)
    tracer.start()
    try:
        value = eval(call, namespace)  # noqa: S307 - the test's own call
    finally:
        tracer.stop()
    return value, tracer.result()


def test_recursion_lines_and_call_records():
    value, result = run("fact(3)", record_calls=True)
    assert value == 6
    assert result["status"] == "ok"
    assert result["lines"] == [4, 6, 4, 6, 4, 5]
    calls = result["calls"]
    assert [(c["func"], c["depth"], c["args"], c["return"]) for c in calls] == [
        ("fact", 0, {"n": "3"}, "6"),
        ("fact", 1, {"n": "2"}, "2"),
        ("fact", 2, {"n": "1"}, "1"),
    ]
    assert calls[1]["parent"] == 0 and calls[2]["parent"] == 1
    assert calls[2]["lines"] == [4, 5]


def test_generator_resumes_merge_into_one_call_and_every_comprehension_line_counts():
    _, result = run("use_gen(3)", record_calls=True)
    # CPython 3.11: the genexpr and the listcomp are frames of their own; each reports its
    # line on entry and once per iteration (the paper's convention keeps them all)
    assert result["lines"] == [13, 13, 9, 10, 13, 9, 10, 13, 9, 10, 13, 9, 14, 14, 14, 14, 14, 15]
    _, collapsed = run("use_gen(3)", collapse_comprehensions=True)
    assert collapsed["lines"] == [13, 9, 10, 13, 9, 10, 13, 9, 10, 13, 9, 14, 15]
    gens = [c for c in result["calls"] if c["func"] == "gen"]
    assert len(gens) == 1
    assert gens[0]["resumes"] == 3
    assert gens[0]["lines"] == [9, 10, 9, 10, 9, 10, 9]


def test_max_depth_limits_recorded_frames():
    _, result = run("fact(5)", record_calls=True, limits=TraceLimits(max_depth=1))
    assert [c["depth"] for c in result["calls"]] == [0, 1]
    assert result["lines"] == [4, 6, 4, 6]


def test_threads_form_a_concurrent_segment():
    _, result = run("par(2)", record_calls=True)
    lines = result["lines"]
    segments = [item for item in lines if isinstance(item, list)]
    assert len(segments) == 1
    assert lines[:7] == [21, 22, 22, 22, 22, 23, 24] and lines[-2:] == [25, 27]
    assert sorted(segments[0]) == [18, 18, 23, 23, 24, 25, 25, 26, 26]
    assert result["threads"] == 3
    workers = [c for c in result["calls"] if c["func"] == "worker"]
    assert {c["thread"] for c in workers} == {1, 2}
    # the patches are undone: the very functions that were there before the tracer ran
    assert threading.Thread.start is ORIGINAL_THREAD_START and threading.Thread.join is ORIGINAL_THREAD_JOIN


def test_user_repr_is_never_called():
    _, result = run("take(Loud(), 1)", record_calls=True)
    assert result["calls"][0]["args"] == {"obj": "<prog.Loud>", "n": "1"}
    assert result["calls"][0]["return"] == "2"


def test_handled_exception_is_not_reported_and_opcodes_counted():
    value, result = run("boom(4)", record_calls=True, count_opcodes=True)
    assert value == -1
    assert result["calls"][0]["exception"] is None
    assert result["calls"][0]["return"] == "-1"
    assert result["opcodes"] > result["line_events"] > 0


def test_cap_reports_too_large_instead_of_truncating():
    _, result = run("fact(50)", limits=TraceLimits(max_line_events=20))
    assert result["status"] == "too_large"
    assert "line events" in result["too_large"]
    assert "lines" not in result


def test_summaries_are_bounded_and_deterministic():
    assert summarize(list(range(100))) == "[0, 1, 2, 3, 4, 5, 6, 7, ...(+92)]"
    assert summarize(2**1000) == "<int of 1001 bits>"
    assert summarize({"b", "a"}) == "{'a', 'b'}"
    assert summarize("x" * 200).endswith("...(+120)")
    assert summarize([[[[1]]]]) == "[[[<list of 1>]]]"
