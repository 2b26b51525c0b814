"""The trace family end to end: HumanEval and case directories through the real sandbox."""

from __future__ import annotations

import json
import textwrap


from execbench import registry
from execbench.dataset import read_manifest, read_rejected, read_tasks
from execbench.dataset.cache import BuildCache
from execbench.families.build import build_dataset
from execbench.families.trace.build import approx_tokens, render_trace

TRACE = registry.get("trace")


def write_case(root, name, program, **config):
    case = root / name
    case.mkdir(parents=True)
    (case / "program.py").write_text(textwrap.dedent(program))
    lines = [f'id = "{name}"', 'language = "python"', 'source = "program.py"']
    lines += [f"{key} = {json.dumps(value)}" for key, value in config.items()]
    (case / "case.toml").write_text("\n".join(lines) + "\n")
    return case


def build(sources, out, **kwargs):
    options = {**TRACE.default_options, **kwargs.pop("options", {})}
    return build_dataset(TRACE, sources, out, options=options, **kwargs)


def test_humaneval_problems_become_tasks_with_real_traces(tmp_path):
    manifest = build(["humaneval"], tmp_path / "he", limit=3, jobs=2)
    tasks = list(read_tasks(tmp_path / "he"))
    assert manifest["candidates"] == 3
    assert len(tasks) == manifest["tasks"] > 10
    first = tasks[0]
    assert first.id == "trace/humaneval/HumanEval-0/0#trace"
    assert first.source_id == "humaneval/HumanEval-0"
    assert first.prompt_fields["call"].startswith("has_close_elements(")
    program_lines = first.prompt_fields["program"].splitlines()
    # every traced line is a real, non-def line of the shown program
    for line in first.answer:
        text = program_lines[line - 1].strip()
        assert text and not text.startswith(("def ", "#", '"""'))
    assert first.metrics["trace_length"] == len(first.answer)
    assert first.metrics["cyclomatic"] >= 1 and first.metrics["loc"] > 0


def test_case_directories_calls_script_errors_and_nondeterminism(tmp_path):
    write_case(tmp_path / "src", "good", """\
        def double(x):
            y = x * 2
            return y
        """, calls=["double(1)", "double(1)", "double('a')", "double(None) + 1"])
    write_case(tmp_path / "src", "script", """\
        import sys
        n = int(sys.stdin.read())
        total = 0
        for i in range(n):
            total += i
        print(total)
        """, stdin=["in1.txt"])
    (tmp_path / "src" / "script" / "in1.txt").write_text("2\n")
    write_case(tmp_path / "src", "flaky", """\
        def order():
            out = []
            for s in {"alpha", "beta", "gamma", "delta", "eps", "zeta"}:
                if s < "c":
                    out.append(s)
            return out
        """, calls=["order()"])
    build([str(tmp_path / "src")], tmp_path / "ds")
    tasks = {t.id: t for t in read_tasks(tmp_path / "ds")}
    assert tasks["trace/src/good/0#trace"].answer == [2, 3]
    assert tasks["trace/src/good/2#trace"].prompt_fields["call"] == "double('a')"
    assert tasks["trace/src/script/0#trace"].answer == [1, 2, 3, 4, 5, 4, 5, 4, 6]
    assert tasks["trace/src/script/0#trace"].prompt_fields["stdin"] == "2\n"
    rejected = {r["candidate"]: r for r in read_rejected(tmp_path / "ds")}
    assert rejected["src/good#1"]["stage"] == "duplicate"
    assert rejected["src/good#3"]["stage"] == "execution"
    assert "TypeError" in rejected["src/good#3"]["reason"]
    assert rejected["src/flaky#0"]["stage"] == "determinism"


def test_filter_on_answer_tokens_and_trace_cap(tmp_path):
    write_case(tmp_path / "src", "loop", """\
        def spin(n):
            k = 0
            while k < n:
                k += 1
            return k
        """, calls=["spin(3)", "spin(400)", "spin(100000)"])
    build([str(tmp_path / "src")], tmp_path / "ds", options={"repeats": 1, "case_max_answer_tokens": 1024})
    assert [t.id for t in read_tasks(tmp_path / "ds")] == ["trace/src/loop/0#trace"]
    rejected = {r["candidate"]: r for r in read_rejected(tmp_path / "ds")}
    assert rejected["src/loop#1"]["stage"] == "filter"
    assert rejected["src/loop#2"]["stage"] == "execution"
    assert "too large" in rejected["src/loop#2"]["reason"]


def test_hostile_program_is_contained_and_rejected(tmp_path):
    write_case(tmp_path / "src", "forever", """\
        def hang():
            while True:
                pass
        """, calls=["hang()"])
    build([str(tmp_path / "src")], tmp_path / "ds", options={"repeats": 1, "call_timeout": 1})
    rejected = list(read_rejected(tmp_path / "ds"))
    assert len(rejected) == 1 and rejected[0]["stage"] == "execution"
    assert "timeout" in rejected[0]["reason"].lower()


def test_rebuild_is_served_from_cache_and_identical(tmp_path):
    cache = BuildCache(tmp_path / "cache.sqlite")
    first = build(["humaneval"], tmp_path / "a", limit=2, cache=cache)
    second = build(["humaneval"], tmp_path / "b", limit=2, cache=cache)
    assert second["cache"] == {"hits": 2, "misses": 0}
    assert first["content_hash"] == second["content_hash"]
    assert (tmp_path / "a" / "tasks.jsonl").read_bytes() == (tmp_path / "b" / "tasks.jsonl").read_bytes()


def test_render_and_token_proxy():
    assert render_trace([1, 2, [3, 4], 5]) == "[1, 2, (3, 4), 5]"
    assert approx_tokens("[1, 2, 3]") == 7
    assert approx_tokens("[1234]") == 4


def test_malformed_case_is_that_cases_rejection(tmp_path):
    """A malformed case is rejected at stage source, with a reason and no path; the others build (issue 34)."""
    bad = tmp_path / "src" / "bad"
    bad.mkdir(parents=True)
    (bad / "case.toml").write_text('id = "bad"\nlanguage = "python"\n')
    write_case(tmp_path / "src", "good", "def f(x):\n    return x\n", calls=["f(1)"])
    manifest = build([str(tmp_path / "src")], tmp_path / "ds")
    assert manifest["tasks"] == 1 and manifest["rejected_by_stage"] == {"source": 1}
    [rejection] = read_rejected(tmp_path / "ds")
    assert rejection["candidate"] == "src/bad" and rejection["reason"] == "missing key 'source' (a string)"


def test_paper_conventions_programs_semantics_and_manifest(tmp_path):
    src = tmp_path / "src"
    write_case(src, "comp", """\
        def f(xs):
            return [x for x in xs]
        def undefined_annotation(x: Undefined):
            return x
        """, calls=["f([1, 2])", "f([1, 2])"])
    write_case(src, "future", """\
        from __future__ import annotations
        def g(x: Undefined):
            return x
        """, calls=["g(1)"])
    build([str(src)], tmp_path / "ds", options={"repeats": 1})
    tasks = {t.id: t for t in read_tasks(tmp_path / "ds")}
    rejected = {r["candidate"]: r for r in read_rejected(tmp_path / "ds")}
    # a program runs with exactly its own compiler flags: no inherited postponed annotations
    assert rejected["src/comp"]["stage"] == "execution" and "NameError" in rejected["src/comp"]["reason"]
    assert tasks["trace/src/future/0#trace"].answer == [3]
    trace = read_manifest(tmp_path / "ds")["settings"]["trace"]
    assert trace["convention"] == "paper" and trace["interpreter"].startswith("CPython 3.11.")

    (src / "comp" / "program.py").write_text("def f(xs):\n    return [x for x in xs]\n")
    build([str(src / "comp")], tmp_path / "paper", options={"repeats": 1, "keep_duplicates": True})
    assert [t.answer for t in read_tasks(tmp_path / "paper")] == [[2, 2, 2, 2]] * 2  # duplicates kept
    build([str(src / "comp")], tmp_path / "collapsed", options={"repeats": 1, "convention": "collapsed"})
    assert [t.answer for t in read_tasks(tmp_path / "collapsed")] == [[2]]


def test_script_answer_starts_past_the_main_guard_and_follows_segment_markers(tmp_path):
    src = tmp_path / "src"
    write_case(src, "guarded", """\
        import sys

        def double(x):
            return 2 * x

        if __name__ == "__main__":
            n = int(sys.stdin.read())
            print(double(n))
        """, stdin=["in.txt"])
    write_case(src, "plain", """\
        import sys
        n = int(sys.stdin.read())
        print(n)
        """, stdin=["in.txt"])
    write_case(src, "marked", """\
        from threading import Thread

        def work(k):
            return k * k

        if __name__ == "__main__":
            t1 = Thread(target=work, args=(1,))
            t2 = Thread(target=work, args=(2,))
            t1.start() #START
            t2.start()
            t1.join()
            t2.join() #END
            print("done")
        """, stdin=["in.txt"])
    for case in ("guarded", "plain", "marked"):
        (src / case / "in.txt").write_text("3\n")
    build([str(src)], tmp_path / "ds", options={"repeats": 2})
    tasks = {t.id: t.answer for t in read_tasks(tmp_path / "ds")}
    assert tasks["trace/src/guarded/0#trace"] == [7, 8, 4]
    assert tasks["trace/src/plain/0#trace"] == [1, 2, 3]  # no guard: the whole run
    # the segment opens with the #START line and closes before the #END line
    assert tasks["trace/src/marked/0#trace"] == [7, 8, [4, 4, 9, 10, 11], 12, 13]
    build([str(src / "guarded")], tmp_path / "module", options={"repeats": 1, "script_start": "module"})
    assert [t.answer for t in read_tasks(tmp_path / "module")] == [[1, 3, 6, 7, 8, 4]]


def test_crashing_and_tampering_calls_are_rejected(tmp_path):
    write_case(tmp_path / "src", "hostile", """\
        import ctypes, os, sys
        def crash():
            x = 1
            ctypes.string_at(0)
            return x
        def leave():
            os._exit(0)
        def sneaky(n):
            getattr(sys, "set" + "trace")(None)
            t = 0
            for i in range(n):
                t += i
            return t
        def fine():
            return 1
        """, calls=["crash()", "leave()", "sneaky(3)", "fine()"])
    build([str(tmp_path / "src")], tmp_path / "ds", options={"repeats": 1})
    assert [t.answer for t in read_tasks(tmp_path / "ds")] == [[15]]
    rejected = {r["candidate"]: r for r in read_rejected(tmp_path / "ds")}
    assert {r["stage"] for r in rejected.values()} == {"execution"}
    assert "SIGSEGV" in rejected["src/hostile#0"]["reason"]
    assert "exit status 0" in rejected["src/hostile#1"]["reason"]
    assert rejected["src/hostile#2"]["reason"].startswith("tracer_tampered:")
