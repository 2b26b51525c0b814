"""Building cruxeval tasks: real sandboxed runs of small CRUXEval-format files and of the shipped copy."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from execbench import registry
from execbench.families.build import build_dataset
from execbench.sources import cruxeval as source

REFERENCE = Path(__file__).resolve().parents[3].parent / "shared" / "reference" / "cruxeval" / "cruxeval.jsonl"

PROBLEMS = [
    # correct, loop: trace length 1 (total = 0) + 4 (for: 3 items + exit) + 3 (body) + 1 (return) = 9
    {"id": "sample_0", "code": "def f(xs):\n    total = 0\n    for x in xs:\n        total += x\n    return total",
     "input": "[1, 2, 3]", "output": "6"},
    # recorded output wrong: rejected at verification
    {"id": "sample_1", "code": "def f(s):\n    return s.upper()", "input": "'ab'", "output": "'Ab'"},
    # raises: rejected at execution
    {"id": "sample_2", "code": "def f(d):\n    return d['missing']", "input": "{}", "output": "0"},
    # a lambda argument: output arm only
    {"id": "sample_3", "code": "def f(xs, key):\n    return sorted(xs, key=key)", "input": "[3, 1], lambda x: -x",
     "output": "[3, 1]"},
    # range -> its list stand-in; Python == semantics: 1.0 == 1 is CRUXEval's verdict too
    {"id": "sample_4", "code": "def f(r):\n    return sum(r) / 3", "input": "range(3)", "output": "1"},
    # set of strings: iteration order depends on the hash seed, the value does not
    {"id": "sample_5", "code": "def f(s):\n    return sorted(s)", "input": "{'b', 'a', 'c'}",
     "output": "['a', 'b', 'c']"},
    # keyword argument and a global of the program used by the input
    {"id": "sample_6", "code": "BASE = [1, 2]\ndef f(xs, k=0):\n    return xs[k]", "input": "BASE[:], k=1",
     "output": "2"},
]


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _build(tmp_path: Path, rows: list[dict], **options) -> tuple[list[dict], list[dict], dict]:
    family = registry.get("cruxeval")
    opts = {**family.default_options, "path": str(_write(tmp_path / "cruxeval.jsonl", rows)), **options}
    manifest = build_dataset(family, ["cruxeval"], tmp_path / "out", options=opts)
    tasks = [json.loads(line) for line in (tmp_path / "out" / "tasks.jsonl").read_text().splitlines()]
    rejected = [json.loads(line) for line in (tmp_path / "out" / "rejected.jsonl").read_text().splitlines()]
    return tasks, rejected, manifest


def test_records_do_not_depend_on_the_build_check_seeds(tmp_path):
    """Two builds under other check seeds write the same tasks.jsonl (the seeds are only in the manifest)."""
    rows = PROBLEMS[:1]
    for name in "ab":
        (tmp_path / name).mkdir()
    first = _build(tmp_path / "a", rows, check_seeds="5,9", arms="output-prediction")
    second = _build(tmp_path / "b", rows, check_seeds="7,11", arms="output-prediction")
    assert first[2]["settings"]["hash_seeds"]["check"] == [5, 9]
    assert second[2]["settings"]["hash_seeds"]["check"] == [7, 11]
    assert first[0] == second[0] and len(first[0]) == 1
    assert first[2]["content_hash"] == second[2]["content_hash"]


def test_build_verifies_every_answer_and_finds_literal_inputs(tmp_path):
    tasks, rejected, manifest = _build(tmp_path, PROBLEMS, batch_size=4, arms="output-prediction,input-prediction")
    by_id = {t["id"]: t for t in tasks}
    reasons = {r["candidate"]: (r["stage"], r["reason"]) for r in rejected}
    assert manifest["candidates"] == 2  # batches of 4
    assert reasons["cruxeval/sample_1"][0] == "verification"
    assert "'AB'" in reasons["cruxeval/sample_1"][1]
    assert reasons["cruxeval/sample_2"][0] == "execution" and "KeyError" in reasons["cruxeval/sample_2"][1]
    assert reasons["cruxeval/sample_3#input-prediction"][0] == "literal"
    assert "function" in reasons["cruxeval/sample_3#input-prediction"][1]
    assert len(rejected) == 3
    out0 = by_id["cruxeval/cruxeval/sample_0#output-prediction"]
    assert out0["answer"] == "6" and out0["answer_kind"] == "python-literal"
    assert out0["source_id"] == "cruxeval/sample_0" and out0["provenance"]["cruxeval_id"] == "sample_0"
    assert out0["metrics"]["trace_length"] == 9 and out0["provenance"]["trace_lengths"] == [9, 9, 9]
    # the key run's seed only (the check seeds are the manifest's): 3 runs agreed, the answer is seed 0's
    assert out0["provenance"]["repeats"] == 3 and "hash_seeds" not in out0["provenance"]
    assert out0["provenance"]["key_hash_seed"] == manifest["settings"]["hash_seeds"]["key"] == 0
    assert out0["metrics"]["cyclomatic"] == 2 and out0["metrics"]["loc"] == 5
    assert out0["prompt_fields"]["call"] == "f([1, 2, 3])"
    assert by_id["cruxeval/cruxeval/sample_3#output-prediction"]["answer"] == "[3, 1]"
    assert by_id["cruxeval/cruxeval/sample_4#input-prediction"]["answer"] == "[0, 1, 2]"
    assert by_id["cruxeval/cruxeval/sample_4#input-prediction"]["provenance"]["literal_input_differs"] is True
    assert by_id["cruxeval/cruxeval/sample_4#output-prediction"]["provenance"]["returned_literal"] is True
    assert by_id["cruxeval/cruxeval/sample_5#input-prediction"]["answer"] == "{'a', 'b', 'c'}"  # canonical order
    assert by_id["cruxeval/cruxeval/sample_6#input-prediction"]["answer"] == "[1, 2], k=1"
    assert by_id["cruxeval/cruxeval/sample_6#input-prediction"]["prompt_fields"] == {
        "program": PROBLEMS[6]["code"], "output": "2"}


def test_a_program_that_hangs_or_floods_is_rejected_and_the_batch_survives(tmp_path):
    rows = [
        {"id": "sample_0", "code": "def f(n):\n    while True:\n        n += 1", "input": "0", "output": "0"},
        {"id": "sample_1", "code": "def f(n):\n    return [0] * n", "input": "10**10", "output": "[]"},
        {"id": "sample_2", "code": "def f(n):\n    return n + 1", "input": "1", "output": "2"},
    ]
    tasks, rejected, _ = _build(tmp_path, rows, repeats=1, call_timeout=1.0, memory_mb=256,
                                arms="output-prediction,input-prediction")
    assert [t["id"] for t in tasks] == ["cruxeval/cruxeval/sample_2#output-prediction",
                                        "cruxeval/cruxeval/sample_2#input-prediction"]
    reasons = {r["candidate"]: r["reason"] for r in rejected}
    assert "limit" in reasons["cruxeval/sample_0"]
    assert "MemoryError" in reasons["cruxeval/sample_1"]


def test_source_errors_are_reported(tmp_path):
    from execbench.contract import SourceError

    family = registry.get("cruxeval")
    with pytest.raises(SourceError, match="unknown cruxeval source"):
        list(family.candidates(["humaneval"], family.default_options))
    bad = _write(tmp_path / "bad.jsonl", [{"id": "x", "code": "", "input": "", "output": ""}])
    with pytest.raises(SourceError, match="sample_N"):
        list(family.candidates(["cruxeval"], {**family.default_options, "path": str(bad)}))


def test_the_shipped_copy_is_cruxeval_with_its_license():
    problems, origin = source.read()
    assert len(problems) == 800 and [p.id for p in problems] == [f"sample_{i}" for i in range(800)]
    assert origin == {"file": "shipped",
                      "sha256": "8368b81047dc5014e4caf5a2f97604eff7644e0ecd7415e3ceeb184bbc2e0c96"}
    import importlib.resources

    notice = (importlib.resources.files("execbench") / "data" / "cruxeval" / "LICENSE").read_text()
    assert notice.startswith("MIT License") and "Copyright (c) 2023 Meta" in notice
    if REFERENCE.exists():
        assert hashlib.sha256(REFERENCE.read_bytes()).hexdigest() == origin["sha256"]


def test_one_arm_only(tmp_path):
    tasks, rejected, _ = _build(tmp_path, [PROBLEMS[0], PROBLEMS[3]], repeats=1, arms="output-prediction")
    assert [t["id"] for t in tasks] == ["cruxeval/cruxeval/sample_0#output-prediction",
                                        "cruxeval/cruxeval/sample_3#output-prediction"]
    assert rejected == []  # sample_3's input arm was not asked for
    from execbench.contract import SourceError

    (tmp_path / "x").mkdir()
    with pytest.raises(SourceError, match="arms must be"):
        _build(tmp_path / "x", [PROBLEMS[0]], arms="trace")


LOOPS = [
    {"id": "sample_0", "code": "def f(n):\n    total = 0\n    i = 0\n    while i < n:\n        total += i\n"
     "        i += 1\n    return total", "input": "4", "output": "6"},
    {"id": "sample_1", "code": "def f(xs):\n    found = None\n    for x in xs:\n        if x > 2:\n"
     "            found = x\n            break\n    return found", "input": "[1, 2, 3, 4]", "output": "3"},
    {"id": "sample_2", "code": "def f(xs):\n    for x in xs:\n        if x:\n            return x\n    return 0",
     "input": "[0, 0, 5]", "output": "5"},
    {"id": "sample_3", "code": "def f(a):\n    return a + 1", "input": "1", "output": "2"},
]


def test_checkpoint_arms_follow_the_state_family(tmp_path):
    tasks, rejected, _ = _build(tmp_path, LOOPS, arms="inside-loop-state,post-loop-state")
    by_id = {t["id"]: t for t in tasks}
    inside = by_id["cruxeval/cruxeval/sample_0#inside-loop-state"]
    # 4 iterations, K = 4 // 2 + 1 = 3: two complete iterations (total 0 + 1), i bound to 2
    assert inside["answer"] == {"total": 1, "i": 2} and inside["answer_kind"] == "json"
    assert inside["prompt_fields"]["fields"] == ["total", "i"]
    assert (inside["prompt_fields"]["loop_line"], inside["prompt_fields"]["inside_iteration"],
            inside["prompt_fields"]["loop_iterations"]) == (4, 3, 4)
    assert by_id["cruxeval/cruxeval/sample_0#post-loop-state"]["answer"] == {"total": 6, "i": 4}
    # break after 3 iterations; found changes type (null -> int), so only x qualifies
    assert by_id["cruxeval/cruxeval/sample_1#inside-loop-state"]["answer"] == {"x": 2}
    assert by_id["cruxeval/cruxeval/sample_1#post-loop-state"]["answer"] == {"x": 3}
    reasons = {r["candidate"]: r["reason"] for r in rejected}
    assert reasons["cruxeval/sample_2#loop-state"].startswith("f does not reach a line after the loop")
    assert reasons["cruxeval/sample_3#loop-state"] == "f has no loop"
    assert len(tasks) == 4 and len(rejected) == 2


def test_a_program_that_kills_the_runner_or_plants_results_costs_only_itself(tmp_path, monkeypatch):
    killer = {"id": "sample_0", "code": "import os, signal\ndef f(x):\n    os.kill(os.getppid(), signal.SIGKILL)\n"
              "    return x", "input": "1", "output": "1"}
    normal = {"id": "sample_3", "code": "def f(x):\n    return x + 1", "input": "1", "output": "2"}
    # tries to kill the job runner (its parent): refused (Landlock signal scope), the problem fails alone
    (tmp_path / "a").mkdir()
    tasks, rejected, _ = _build(tmp_path / "a", [killer, normal], repeats=1, arms="output-prediction")
    assert [t["id"] for t in tasks] == ["cruxeval/cruxeval/sample_3#output-prediction"]
    assert "PermissionError" in rejected[0]["reason"] and rejected[0]["candidate"] == "cruxeval/sample_0"
    # without the scope (Landlock forced off) it kills the runner: it fails alone, the others run again
    monkeypatch.setenv("EXECBENCH_SANDBOX_FORCE_FALLBACK", "landlock")
    (tmp_path / "a2").mkdir()
    tasks, rejected, _ = _build(tmp_path / "a2", [killer, normal], repeats=1, arms="output-prediction")
    assert [t["id"] for t in tasks] == ["cruxeval/cruxeval/sample_3#output-prediction"]
    assert "job runner ended" in rejected[0]["reason"] and rejected[0]["candidate"] == "cruxeval/sample_0"
    monkeypatch.delenv("EXECBENCH_SANDBOX_FORCE_FALLBACK")
    # plants a fake "verified" result where a runner could keep the next problem's value; the
    # next problem ends without a value (os._exit): nothing planted stands in for it
    planter = {"id": "sample_1", "code": "import os\ndef f(x):\n    fake = ("
               "'{\"status\": \"ok\", \"equal\": true, \"returned\": \"1\", \"returned_literal\": true, "
               "\"trace_length\": 1, \"trace_status\": \"ok\", \"compare_error\": null}')\n"
               "    for path in ('../.records/1.json', '.records/1.json', '../1.json'):\n"
               "        try:\n            open(path, 'w').write(fake)\n        except OSError:\n            pass\n"
               "    return x",
               "input": "1", "output": "1"}
    crasher = {"id": "sample_2", "code": "import os\ndef f(x):\n    os._exit(0)", "input": "1", "output": "1"}
    (tmp_path / "b").mkdir()
    tasks, rejected, _ = _build(tmp_path / "b", [planter, crasher, normal], repeats=1, arms="output-prediction")
    assert [t["id"] for t in tasks] == ["cruxeval/cruxeval/sample_1#output-prediction",
                                        "cruxeval/cruxeval/sample_3#output-prediction"]
    assert rejected[0]["candidate"] == "cruxeval/sample_2" and "no result" in rejected[0]["reason"]


def test_an_output_the_grader_cannot_read_is_rejected(tmp_path):
    deep = "[" * 60 + "]" * 60
    rows = [{"id": "sample_0", "code": f"def f(x):\n    return {deep}", "input": "1", "output": deep}]
    tasks, rejected, _ = _build(tmp_path, rows, repeats=1)
    assert tasks == [] and rejected[0]["stage"] == "verification"
    assert "not a literal the grader reads" in rejected[0]["reason"]
