"""The state family end to end, through the real sandbox (and the real g++)."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from execbench import registry
from execbench.cli import app
from execbench.dataset import read_manifest, read_rejected, read_tasks
from execbench.contract import Candidate
from execbench.families.build import build_dataset
from execbench.families.state import build, netsimplex
from execbench.sources.cases import builtin_corpus

STATE = registry.get("state")
CLASSIC = builtin_corpus("state", "classic")


def write_case(root: Path, name: str, program: str, short: str, long: str, checkpoint: dict | None = None,
               language: str = "python") -> Path:
    case = root / name
    case.mkdir(parents=True)
    source = "main.py" if language == "python" else "main.cpp"
    (case / source).write_text(textwrap.dedent(program))
    (case / "short.txt").write_text(short)
    (case / "long.txt").write_text(long)
    lines = [f'id = "{name}"', f'language = "{language}"', f'source = "{source}"',
             'short_input = "short.txt"', 'long_input = "long.txt"']
    if checkpoint:
        lines.append("[checkpoint]")
        lines += [f"{key} = {json.dumps(value)}" for key, value in checkpoint.items()]
    (case / "case.toml").write_text("\n".join(lines) + "\n")
    return case


def test_worked_example_of_the_paper_appendix_g(tmp_path):
    """abc310_e (figure 1), written from the figure: 9, 251502 and the two states."""
    case = CLASSIC / "python" / "abc310e_nand"
    manifest = build_dataset(STATE, [str(case)], tmp_path / "ds", options=dict(STATE.default_options))
    assert manifest["tasks"] == 4 and manifest["rejected"] == 0
    tasks = {t.arm: t for t in read_tasks(tmp_path / "ds")}
    short, long, inside, post = (tasks[a] for a in ("short-trace-final", "long-trace-final",
                                                    "inside-loop-state", "post-loop-state"))
    assert short.answer == "9\n" and long.answer == "251502\n"
    assert inside.answer == {"ans": 63250, "cnt1": 500, "dp1": 500}
    assert post.answer == {"ans": 251502, "cnt1": 2, "dp1": 2}
    assert inside.provenance["state_line"] == '{"ans":63250,"cnt1":500,"dp1":500}'
    assert post.provenance["state_line"] == '{"ans":251502,"cnt1":2,"dp1":2}'
    clean = (case / "main.py").read_text()
    assert short.prompt_fields["program"] == long.prompt_fields["program"] == clean
    assert short.prompt_fields["input"] == "5\n00110\n"
    assert long.prompt_fields["input"] == "1002\n" + "01" * 501 + "\n"
    assert "    if _checkpoint_count == 502:\n" in inside.prompt_fields["program"]
    assert "if _checkpoint_count >= 502:\n" in post.prompt_fields["program"]
    assert inside.metrics["inside_iteration"] == 502 and inside.metrics["loop_iterations"] == 1002
    lengths = short.provenance["trace_lengths"]
    assert len(lengths["short"]) == len(lengths["long"]) == 3 and max(lengths["short"]) * 10 < min(lengths["long"])
    # 3 runs agreed; the answer is the key run's (seed 0); the check seeds are only in the manifest
    assert short.provenance["repeats"] == 3 and "hash_seeds" not in short.provenance
    assert short.provenance["key_hash_seed"] == manifest["settings"]["hash_seeds"]["key"] == 0
    for task in tasks.values():
        assert task.source_id == "abc310e_nand/abc310e_nand"
        assert task.metrics["trace_length"] > 0 and task.metrics["peak_state"] > 0
        assert task.metrics["state_load"] >= task.metrics["peak_state"]
        assert task.metrics["cyclomatic"] >= 1
        # the oracle itself, in the requested envelope, grades as correct
        answer = task.answer if task.answer_kind == "text" else json.dumps(task.answer)
        assert STATE.grade(task, json.dumps({"output": answer})).correct
    # peak state of the clean long run: S, data (list of 2), N, cnt0, cnt1, ans, ch, dp0, dp1
    assert long.metrics["peak_state"] == 11
    assert inside.metrics["trace_length"] < long.metrics["trace_length"] < post.metrics["trace_length"]


NONDETERMINISTIC = """\
    import sys
    words = sys.stdin.read().split()
    seen = set()
    for w in words:
        seen.add(w)
    print(" ".join(seen))
    """
COUNTER = """\
    import sys
    n = int(sys.stdin.read())
    total = 0
    constant = 7
    for i in range(n):
        total += i
    print(total)
    """


def test_admission_checks_and_automatic_choice_through_the_cli(tmp_path):
    src = tmp_path / "cases"
    words = " ".join(f"w{i}" for i in range(400))
    write_case(src, "hash_order", NONDETERMINISTIC, "a b\n", words + "\n", {"loop_line": 4, "fields": ["w"]})
    write_case(src, "same_length", COUNTER, "300\n", "300\n", {"loop_line": 5, "fields": ["total"]})
    write_case(src, "unreachable", COUNTER, "3\n", "300\n",
               {"loop_line": 5, "fields": ["total"], "inside_iteration": 1000})
    write_case(src, "no_change", COUNTER, "3\n", "300\n", {"loop_line": 5, "fields": ["constant"]})
    write_case(src, "crash", COUNTER, "3\n", "oops\n", {"loop_line": 5, "fields": ["total"]})
    write_case(src, "slow", COUNTER.replace("range(n)", "iter(int, 1)"), "3\n", "4\n",
               {"loop_line": 5, "fields": ["total"], "inside_iteration": 2})
    write_case(src, "auto", COUNTER, "3\n", "300\n")
    (src / "broken").mkdir()
    (src / "broken" / "case.toml").write_text('id = "broken"\nlanguage = "python"\nsource = "main.py"\n')
    out = tmp_path / "ds"
    result = CliRunner().invoke(app, ["build", "state", str(src), "-o", str(out), "--jobs", "2", "--no-cache",
                                      "--set", "repeats=2", "--set", "time_limit=1.0"])
    assert result.exit_code == 0, result.output
    rejected = {r["candidate"].split("/")[-1]: r for r in read_rejected(out)}
    assert rejected["hash_order"]["stage"] == "determinism"
    assert rejected["same_length"]["stage"] == "trace-order"
    assert rejected["unreachable"]["stage"] == "checkpoint" and "did not fire" in rejected["unreachable"]["reason"]
    assert rejected["no_change"]["stage"] == "checkpoint" and "no core field" in rejected["no_change"]["reason"]
    assert rejected["crash"]["stage"] == "execution" and "ValueError" in rejected["crash"]["reason"]
    assert rejected["slow"]["stage"] == "caps" and "time" in rejected["slow"]["reason"]
    assert rejected["broken"]["stage"] == "source" and "short_input" in rejected["broken"]["reason"]
    tasks = {t.arm: t for t in read_tasks(out)}
    assert set(tasks) == {"short-trace-final", "long-trace-final", "inside-loop-state", "post-loop-state"}
    choice = tasks["inside-loop-state"].provenance["checkpoint"]
    assert choice["chosen_by"] == "auto" and choice["loop_line"] == 5 and choice["fields"] == ["total", "i"]
    assert choice["inside_iteration"] == 151 and choice["loop_iterations"] == 300
    # `constant` never changes; the loop target comes after the other variables
    assert tasks["inside-loop-state"].answer == {"total": sum(range(150)), "i": 150}
    assert tasks["post-loop-state"].answer == {"total": sum(range(300)), "i": 299}
    assert read_manifest(out)["rejected"] == 7



@pytest.mark.slow
def test_cases_built_together_give_what_each_gives_alone(tmp_path):
    """build_candidates runs the cases of a batch in shared sandboxes (one per step and hash
    seed); every outcome must be the one the case gets when built alone."""
    src = tmp_path / "cases"
    write_case(src, "auto", COUNTER, "3\n", "300\n")                      # count + snapshot steps
    write_case(src, "crash", COUNTER, "3\n", "oops\n", {"loop_line": 5, "fields": ["total"]})
    write_case(src, "no_change", COUNTER, "3\n", "300\n", {"loop_line": 5, "fields": ["constant"]})
    write_case(src, "fixed", COUNTER, "3\n", "300\n",
               {"loop_line": 5, "fields": ["total", "i"], "inside_iteration": 7})  # no count step
    options = {**STATE.default_options, "repeats": 2}
    candidates = list(STATE.candidates([str(src)], options))
    together = build.build_candidates(candidates, options)
    alone = [STATE.build_candidate(candidate, options) for candidate in candidates]
    assert [(o.tasks, o.rejected) for o in together] == [(o.tasks, o.rejected) for o in alone]
    by_case = {c.key.split("/")[-1]: o for c, o in zip(candidates, together)}
    assert len(by_case["auto"].tasks) == len(by_case["fixed"].tasks) == 4
    assert by_case["crash"].rejected[0]["stage"] == "execution"
    assert by_case["no_change"].rejected[0]["stage"] == "checkpoint"
    assert {t["arm"]: t["answer"] for t in by_case["fixed"].tasks}["inside-loop-state"] == {"total": 15, "i": 6}



def test_a_count_known_in_advance_runs_with_the_seeds_and_a_wrong_one_changes_nothing(monkeypatch):
    """networkx-simplex cases carry the selection's count: the runs it implies go with the
    count run; a count that turns out different is dropped and the case built as usual."""
    from execbench.families.state import jobs

    sandboxes = []
    real = jobs.run
    monkeypatch.setattr(jobs, "run", lambda batch, **kw: sandboxes.append(kw["seed"]) or real(batch, **kw))
    case = next(iter(STATE.candidates([str(CLASSIC / "python" / "abc310e_nand")], STATE.default_options)))
    options = {**STATE.default_options, "repeats": 2, "check_seeds": "1"}  # check seed pinned to 1
    plain = case.payload
    assert plain["checkpoint"]["inside_iteration"] is None   # the case has a count run
    outcomes = []
    for pivots in (None, 1002, 40):   # no guess; the right count; a wrong one
        band = {"band": {"name": "all", "range": [1, 10_000], "pivots": pivots}} if pivots else {}
        sandboxes.clear()
        outcomes.append(STATE.build_candidate(Candidate(case.key, {**plain, **band}), options))
        # hash seeds of the sandboxes: count, seed 0, seed 1 | count with both seeds | that, then again
        assert sandboxes == {None: [0, 0, 1], 1002: [0, 1], 40: [0, 1, 0, 1]}[pivots]
    assert len(outcomes[0].tasks) == 4
    assert outcomes[0].tasks == outcomes[1].tasks == outcomes[2].tasks
    assert outcomes[0].tasks[3]["metrics"]["loop_iterations"] == 1002



def test_a_program_that_forges_its_profile_is_rejected_not_a_crash(tmp_path):
    forge = COUNTER + "globals()['_check' + 'point_profile'] = %s\n"
    src = tmp_path / "cases"
    for name, value in (("counts", "{'counts': 'x', 'last_exit': []}"),
                        ("snapshots", "dict(globals()['_check' + 'point_profile'], "
                                      "snapshots={'0:inside': 3, '0:post': 4})"),
                        ("unparsable", "dict(globals()['_check' + 'point_profile'], snapshots={'0:inside': "
                                       "{'total': {'json': '[' * 150}}, '0:post': {'total': {'json': '1'}}})")):
        write_case(src, name, forge % value, "3\n", "300\n")
    outcomes = build.build_candidates(list(STATE.candidates([str(src)], STATE.default_options)),
                                      {**STATE.default_options, "repeats": 1})
    reasons = [o.rejected[0]["reason"] for o in outcomes]
    assert reasons == ["profile run returned malformed counts", "profile run returned malformed snapshots",
                       "profile run returned malformed snapshots"]


CPP = """\
    #include <iostream>
    using namespace std;

    int main() {
        int n;
        cin >> n;
        long long total = 0, square = 0;
        int i = 0;
        for (i = 0; i < n; ++i) {
            square = 1LL * i * i;
            total += square;
        }
        cout << total << "\\n";
        return 0;
    }
    """


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_cpp_case_with_gcov_trace_lengths_and_compile_rejections(tmp_path):
    src = tmp_path / "cases"
    write_case(src, "squares", CPP, "3\n", "400\n", {"loop_line": 9, "fields": ["i", "total", "square"]},
               language="cpp")
    write_case(src, "broken", CPP.replace("cout <<", "cout <<<"), "3\n", "400\n",
               {"loop_line": 9, "fields": ["i"], "inside_iteration": 2}, language="cpp")
    manifest = build_dataset(STATE, [str(src)], tmp_path / "ds", options=dict(STATE.default_options), jobs=2)
    rejected = {r["candidate"].split("/")[-1]: r for r in read_rejected(tmp_path / "ds")}
    assert rejected["broken"]["stage"] == "compile" and "error" in rejected["broken"]["reason"]
    tasks = {t.arm: t for t in read_tasks(tmp_path / "ds")}
    assert manifest["tasks"] == 4
    assert tasks["short-trace-final"].answer == "5\n"
    assert tasks["long-trace-final"].answer == f"{sum(i * i for i in range(400))}\n"
    assert tasks["inside-loop-state"].answer == {"i": 200, "square": 199 * 199,
                                                 "total": sum(i * i for i in range(200))}
    assert tasks["post-loop-state"].answer == {"i": 400, "square": 399 * 399,
                                               "total": sum(i * i for i in range(400))}
    prov = tasks["long-trace-final"].provenance
    assert prov["trace_unit"] == "gcov line executions" and prov["toolchain"].startswith("g++")
    assert prov["key_hash_seed"] is None and "hash_seeds" not in prov  # C++ has no hash seed
    # gcov: the loop's three lines run ~400 times each, plus a handful of straight-line lines
    assert 3 * 400 < tasks["long-trace-final"].metrics["trace_length"] < 5 * 400
    # the C++ state meter (test_state_cpp_auto.py checks its values by hand): 7 statements
    # outside the loop, 2 per iteration; the state holds n, total, square, i
    assert tasks["long-trace-final"].metrics["line_events"] == 7 + 2 * 400
    assert tasks["long-trace-final"].metrics["peak_state"] == 4 and tasks["long-trace-final"].metrics["state_stride"] == 1
    assert tasks["inside-loop-state"].language == "cpp"


@pytest.mark.slow
def test_networkx_simplex_program_selection_and_one_case(tmp_path):
    program = netsimplex.program()
    assert "@nx._dispatchable" not in program and "@not_implemented_for" not in program
    assert "def network_simplex(G, demand=\"demand\"" in program and program.endswith("    main()\n")
    import inspect

    import networkx as nx  # the library itself (not code under test): the unwrapped function's text
    unwrapped = inspect.getsource(inspect.unwrap(nx.network_simplex))
    assert unwrapped[unwrapped.index("def network_simplex"):] in program
    line = netsimplex.pivot_loop_line(program)
    assert program.splitlines()[line - 1].strip() == "for i, p, q in DEAF.find_entering_edges():"
    selection = netsimplex.load_selection()
    assert len(selection["selected"]) == 30
    assert {s["band"] for s in selection["selected"]} == {"low", "mid", "high"}
    assert netsimplex.generate(7) == netsimplex.generate(7)
    first = selection["selected"][:2]
    assert netsimplex.count_pivots([s["index"] for s in first]) == {s["index"]: s["pivots"] for s in first}
    manifest = build_dataset(STATE, ["networkx-simplex"], tmp_path / "nx", options=dict(STATE.default_options),
                             limit=1)
    assert manifest["tasks"] == 4, list(read_rejected(tmp_path / "nx"))
    tasks = {t.arm: t for t in read_tasks(tmp_path / "nx")}
    assert tasks["long-trace-final"].source_id == "networkx-simplex/network_simplex"
    assert tasks["long-trace-final"].provenance["compare"] == "bytes"
    assert set(tasks["post-loop-state"].answer) == {"i", "p", "q", "j", "s", "t"}
    assert tasks["long-trace-final"].metrics["loop_iterations"] == first[0]["pivots"]


SELF_AWARE = """\
import os
import sys

n = int(input())
total = 0
where = ""
for i in range(n):
    total += sys._getframe().f_lineno
    where = os.path.basename(__file__) + ":" + str(sys._getframe().f_code.co_firstlineno)
print(total, where)
"""


def test_the_instrumented_run_sees_the_clean_programs_line_numbers_and_file_name(tmp_path):
    """Issue 33, principle 4: the states come from instrumented copies, yet a program that reads
    its own line number and file name gets, at the checkpoint, what the clean program has there."""
    case = write_case(tmp_path / "cases", "self_aware", SELF_AWARE, "3\n", "100\n",
                      {"loop_line": 7, "fields": ["total", "where"], "inside_iteration": 5, "core": ["total"]})
    manifest = build_dataset(STATE, [str(case)], tmp_path / "ds", options={**STATE.default_options, "repeats": 1})
    assert manifest["tasks"] == 4, list(read_rejected(tmp_path / "ds"))
    tasks = {t.arm: t for t in read_tasks(tmp_path / "ds")}
    assert tasks["long-trace-final"].answer == "800 main.py:1\n"  # line 8, 100 times
    assert tasks["inside-loop-state"].answer == {"total": 32, "where": "main.py:1"}  # after 4 iterations
    assert tasks["post-loop-state"].answer == {"total": 800, "where": "main.py:1"}
    shown = tasks["inside-loop-state"].prompt_fields["program"]  # the text shown has lines inserted
    assert "_checkpoint_count" in shown and not shown.splitlines()[7].endswith("f_lineno")


CPP_SELF_AWARE = """\
#include <cstring>
#include <iostream>
using namespace std;

int main() {
    long long n, total = 0, named = 0;
    cin >> n;
    for (long long i = 0; i < n; ++i) {
        total += __LINE__;
        named = strlen(__FILE__) * 1000 + __LINE__;
    }
    cout << total << " " << named << "\\n";
    return 0;
}
"""


def test_the_instrumented_cpp_program_sees_the_clean_programs_lines(tmp_path):
    """Issue 33, principle 4, C++: the state arms compile their copies with #line directives,
    so __LINE__ and __FILE__ are the clean program's at the checkpoint too, and gcov still
    counts the inserted lines apart (the trace length of the copy is its own)."""
    case = write_case(tmp_path / "cases", "self_aware", CPP_SELF_AWARE, "3\n", "400\n",
                      {"loop_line": 8, "fields": ["total", "named"], "inside_iteration": 5, "core": ["total"]},
                      language="cpp")
    manifest = build_dataset(STATE, [str(case)], tmp_path / "ds", options={**STATE.default_options, "repeats": 1})
    assert manifest["tasks"] == 4, list(read_rejected(tmp_path / "ds"))
    tasks = {t.arm: t for t in read_tasks(tmp_path / "ds")}
    assert tasks["long-trace-final"].answer == "3600 8010\n"  # line 9, 400 times; main.cpp, line 10
    assert tasks["inside-loop-state"].answer == {"total": 36, "named": 8010}  # after 4 iterations
    assert tasks["post-loop-state"].answer == {"total": 3600, "named": 8010}
    shown = tasks["inside-loop-state"].prompt_fields["program"]
    assert "#line" not in shown and "++execbench_checkpoint_count;" in shown  # the text shown is unchanged
    inside, long = tasks["inside-loop-state"].metrics, tasks["long-trace-final"].metrics
    assert 0 < inside["trace_length"] < long["trace_length"]


WARNS = """\
import sys

n = int(input())
total = 0
for i in range(n):
    total += i
    if i == 2:
        print(f"warning at line {sys._getframe().f_lineno}", file=sys.stderr)
print(total)
"""


def test_the_instrumented_runs_error_output_must_be_the_clean_runs(tmp_path):
    """Issue 33, principle 4: beyond stdout, the error output up to the checkpoint is compared
    with the clean run's: with the clean line numbers it is the same, and the case is admitted;
    a copy whose stderr differed (here: a forged clean run's) is rejected at the checkpoint."""
    case = write_case(tmp_path / "cases", "warns", WARNS, "3\n", "100\n",
                      {"loop_line": 5, "fields": ["total"], "inside_iteration": 10})
    manifest = build_dataset(STATE, [str(case)], tmp_path / "ds", options={**STATE.default_options, "repeats": 1})
    assert manifest["tasks"] == 4, list(read_rejected(tmp_path / "ds"))
    from execbench.contract import Reject
    from execbench.families.state import admission
    from execbench.sandbox.jobs import JobResult

    clean = JobResult("long", exit_code=0, stderr="warning at line 8\n")
    admission._check_stderr([JobResult("inside", exit_code=0, stderr="warning at line 8\n")], clean, "inside")
    with pytest.raises(Reject, match="error output before the checkpoint"):
        admission._check_stderr([JobResult("inside", exit_code=0, stderr="warning at line 12\n")], clean, "inside")
