"""``execbench grade`` of repo tasks with sympy answers, as a user runs it.

CI runs this in a fresh virtual environment (.ci/run), so it also proves that the sympy
comparison's dependency is declared: it once crashed there with ModuleNotFoundError.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from execbench.dataset import DatasetWriter, Task

ORACLE = "x**2 + 2*x + 1"
RESPONSES = {
    "equivalent": "```python\n(x + 1)**2\n```",
    "wrong": "```python\nx**2 + 1\n```",
    "hostile": "```python\n__import__('os').system('touch PWNED')\n```",
}


def sympy_task(case: str) -> Task:
    return Task(id=f"repo/sympy/{case}#masked-assertion", family="repo", arm="masked-assertion",
                source_id="sympy", language="python",
                prompt_fields={"answer_type": "sympy.core.add.Add"},
                answer=ORACLE, answer_kind="sympy")


def test_grade_sympy_answers_end_to_end(tmp_path):
    dataset = tmp_path / "ds"
    with DatasetWriter(dataset, settings={}) as writer:
        for case in RESPONSES:
            writer.add(sympy_task(case))
        writer.close()
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({"id": f"repo/sympy/{case}#masked-assertion", "response": text}) + "\n"
                               for case, text in RESPONSES.items()))
    result = subprocess.run([sys.executable, "-m", "execbench.cli", "grade", str(dataset), "--answers",
                             str(answers), "-o", str(tmp_path / "results.jsonl"), "--json"],
                            capture_output=True, text=True, cwd=tmp_path, timeout=300,
                            env={**os.environ, "COLUMNS": "200"})
    assert result.returncode == 0, result.stderr
    rows = {row["id"].split("/")[2].split("#")[0]: row
            for row in map(json.loads, (tmp_path / "results.jsonl").read_text().splitlines())}
    assert rows["equivalent"]["correct"] is True
    assert rows["wrong"]["correct"] is False
    assert rows["hostile"]["correct"] is False
    assert not (tmp_path / "PWNED").exists()
    assert json.loads(result.stdout)["n"] == 3
