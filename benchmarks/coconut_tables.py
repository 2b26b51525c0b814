"""CoCoNUT's Tables I and II recomputed from the authors' published predictions with
``execbench grade --variant coconut``.

Every published ``*_NoReps.csv`` (one file per model, prompt and topic: HumanEval, OOP,
Concurrency; the repository's Recursion files were never pushed) becomes a small trace
dataset — one task per row, its answer the row's ``Actual`` trace, ``source_id`` the
HumanEval problem (Table I aggregates per problem) — and an answers file whose responses
are the row's ``Predicted`` text. Both go through the code ``execbench grade --variant
coconut`` runs (``execbench.families.grade``; ``--cli`` runs the command itself), CoT files
as ``coconut`` and Direct files as ``coconut-direct``. Reported per file: how many row
verdicts agree with the paper's ``Matched`` (and how many similarities equal its
``Distance``), and every table cell beside the printed one.

    python benchmarks/coconut_tables.py                              # ../shared/reference/coconut/results
    python benchmarks/coconut_tables.py --results DIR                # another folder of the gzipped copies
    python benchmarks/coconut_tables.py --repo PATH                  # a clone (or a fetched bare git dir)
    python benchmarks/coconut_tables.py --topics he --cli            # HumanEval files only, through the CLI
    python benchmarks/coconut_tables.py --json out.json              # every figure as JSON
    python benchmarks/coconut_tables.py --repo PATH --advanced DIR   # + a coconut-advanced build of PATH

With ``--advanced DIR`` (a dataset built by ``execbench build trace coconut-advanced:PATH``
from the same clone) it also prints, per topic, the traces the build admitted beside the
paper's counts, how many built keys equal the published traces (concurrency: segments
compared sorted, as built keys store them), and Table II recomputed from the published
predictions on the admitted rows only. That is how execbench compares with the paper on
the advanced topics: traces the build rejects (concurrency: nondeterministic or failing in
the sandbox) are excluded, not scored from the paper's key (execbench has no key it did
not run), and the count is shown next to the table (docs/trace-format.md).

Exit status 1 when a file's verdicts agree on fewer than 99.5 % of its rows or a cell that
is not a documented misprint (:data:`MISPRINTS`) is off by more than 0.15 points / 0.01.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from collections import Counter

from execbench import registry
from execbench.dataset import make_id, read_rejected
from execbench.dataset.answers import read_answers
from execbench.families.grade import grade_tasks, summarize
from execbench.dataset import read_tasks
from execbench.families.trace import coconut, coconut_advanced
from execbench.families.trace.grade import canonical_trace

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_RESULTS = ROOT / ".." / "shared" / "reference" / "coconut" / "results"
MODELS = ("Gemini", "Claude", "GPT4o", "LLama70B", "CodeLLama34B", "Qwen32B", "Codestral", "LLama8B", "Qwen7B",
          "CodeLLama7B")
LABELS = dict(zip(MODELS, ("Gemini1.5-Pro 002", "Claude3.5-Sonnet", "GPT4o", "LLama3.1 70B", "CodeLLama 34B",
                           "Qwen2.5-Coder 32B", "Codestral 22B", "LLama3.1 8B", "Qwen2.5-Coder 7B", "CodeLLama 7B")))
PROMPTS = ("CoT", "Direct")
TOPICS = {"he": "humaneval", "oop": "oop", "concurrency": "concurrency"}

# Table I as printed: model -> prompt -> (Acc Hard %, Acc Mean %, Sim, False Sim)
TABLE_1 = {
    "Gemini": {"CoT": (47.2, 66.2, 0.88, 0.37), "Direct": (47.0, 65.7, 0.89, 0.37)},
    "Claude": {"CoT": (41.0, 61.6, 0.87, 0.43), "Direct": (41.0, 58.7, 0.88, 0.44)},
    "GPT4o": {"CoT": (16.8, 39.4, 0.75, 0.50), "Direct": (21.2, 38.8, 0.75, 0.50)},
    "LLama70B": {"CoT": (16.2, 38.1, 0.76, 0.52), "Direct": (25.5, 36.0, 0.71, 0.42)},
    "CodeLLama34B": {"CoT": (1.2, 7.6, 0.46, 0.43), "Direct": (2.5, 10.0, 0.57, 0.52)},
    "Qwen32B": {"CoT": (26.1, 44.3, 0.81, 0.50), "Direct": (32.7, 42.4, 0.78, 0.44)},
    "Codestral": {"CoT": (9.3, 25.0, 0.71, 0.57), "Direct": (3.1, 17.8, 0.66, 0.59)},
    "LLama8B": {"CoT": (1.9, 12.6, 0.56, 0.51), "Direct": (0.6, 10.4, 0.53, 0.48)},
    "Qwen7B": {"CoT": (1.9, 11.0, 0.61, 0.56), "Direct": (0.0, 4.1, 0.56, 0.55)},
    "CodeLLama7B": {"CoT": (0.0, 0.1, 0.28, 0.28), "Direct": (0.0, 0.0, 0.41, 0.41)},
}
TABLE_1_COLUMNS = ("acc_hard", "acc_mean", "sim", "false_sim")
# Table II as printed (OOP and Concurrency): topic -> model -> prompt -> (Acc Mean %, Sim)
TABLE_2 = {
    "oop": {
        "Gemini": {"CoT": (14.0, 0.79), "Direct": (20.0, 0.81)}, "Claude": {"CoT": (0.0, 0.77), "Direct": (1.0, 0.69)},
        "GPT4o": {"CoT": (4.5, 0.82), "Direct": (4.0, 0.73)}, "LLama70B": {"CoT": (15.0, 0.74), "Direct": (10.0, 0.75)},
        "CodeLLama34B": {"CoT": (0.0, 0.37), "Direct": (0.0, 0.37)},
        "Qwen32B": {"CoT": (14.5, 0.78), "Direct": (4.0, 0.73)},
        "Codestral": {"CoT": (1.5, 0.62), "Direct": (1.5, 0.6)}, "LLama8B": {"CoT": (0.5, 0.58), "Direct": (1.0, 0.48)},
        "Qwen7B": {"CoT": (0.0, 0.58), "Direct": (0.0, 0.56)},
        "CodeLLama7B": {"CoT": (0.0, 0.30), "Direct": (0.0, 0.40)},
    },
    "concurrency": {
        "Gemini": {"CoT": (1.0, 0.41), "Direct": (1.0, 0.39)}, "Claude": {"CoT": (0.0, 0.4), "Direct": (0.0, 0.42)},
        "GPT4o": {"CoT": (0.0, 0.39), "Direct": (0.0, 0.4)}, "LLama70B": {"CoT": (1.0, 0.34), "Direct": (1.0, 0.33)},
        "CodeLLama34B": {"CoT": (0.0, 0.24), "Direct": (0.0, 0.27)},
        "Qwen32B": {"CoT": (0.0, 0.36), "Direct": (0.0, 0.37)},
        "Codestral": {"CoT": (0.0, 0.29), "Direct": (0.0, 0.38)}, "LLama8B": {"CoT": (0.0, 0.28), "Direct": (0.0, 0.26)},
        "Qwen7B": {"CoT": (0.0, 0.21), "Direct": (0.0, 0.18)},
        "CodeLLama7B": {"CoT": (0.0, 0.23), "Direct": (0.0, 0.28)},
    },
}
# Printed cells the published rows contradict (recomputed from the rows instead; RESULTS.md)
MISPRINTS = {("he", "Gemini", "Direct", "acc_hard"), ("he", "Gemini", "Direct", "sim"), ("he", "GPT4o", "CoT", "sim"),
             ("he", "GPT4o", "CoT", "false_sim"), ("he", "Qwen32B", "Direct", "acc_hard")}
# Cells whose published rows cannot reproduce the printed value for a reason other than a misprint
EXPLAINED = {
    ("oop", "GPT4o", "CoT", "sim"):
        "16 rows have no trace: their Actual is the text ERROR (the authors' tracer failed) and the model's reply "
        "[ERROR]; the paper scored that pair as text (0.818 each), execbench has no key for them (empty trace: "
        "0.375); with the paper's 0.818 the cell is 0.818",
    ("concurrency", "Codestral", "Direct", "sim"):
        "22 of its 100 published predictions are not the text the authors scored: words, None or Ellipsis "
        "inside the list make their own parser return [] (Distance 0), yet the file carries non-zero Distances "
        "(0.016 of the mean); recomputed from the published text the cell is 0.363",
}
# the file behind each cell in the authors' repository (results/README.md of the reference copy)
REPO_PATHS = {
    ("he", "Gemini", "CoT"): "Gemini/HumanEval/Gemini_HumanEval_CoT_T0_NoReps.csv",
    ("he", "Gemini", "Direct"): "Gemini/HumanEval/Gemini_HumanEval_Trace_Direct_T0_NoReps.csv",
    ("he", "Claude", "CoT"): "Claude/HumanEval/HumanEval_CoT_T0NoReps.csv",
    ("he", "Claude", "Direct"): "Claude/HumanEval/Claude_HumanEval_direct_T0NoReps.csv",
    ("he", "GPT4o", "CoT"): "GPT/HumanEval/HumanEval_CoT_T0_NoReps.csv",
    ("he", "GPT4o", "Direct"): "GPT/HumanEval/HumanEval_Direct_T0_NoReps.csv",
    ("he", "LLama70B", "CoT"): "LLama/70B/HumanEval/results_HumanEval_llama-3.1-70b_NoReps.csv",
    ("he", "LLama70B", "Direct"): "LLama/70B/HumanEval/results_HumanEvalD_llama-3.1-70b_NoReps.csv",
    ("he", "CodeLLama34B", "CoT"): "CodeLLama/34B/HumanEval/results_HumanEval_codellama-34b-instruct_NoReps.csv",
    ("he", "CodeLLama34B", "Direct"): "CodeLLama/34B/HumanEval/results_HumanEvalD_codellama-34b-instruct_NoReps.csv",
    ("he", "Qwen32B", "CoT"): "QwenCoder/32B/HumanEval/results_HumanEval_qwen2.5-coder-32b_NoReps.csv",
    ("he", "Qwen32B", "Direct"): "QwenCoder/32B/HumanEval/results_HumanEvalD_qwen2.5-coder-32b_NoReps.csv",
    ("he", "Codestral", "CoT"): "CodeStral/HumanEval/Codestral_HumanEval_cot_T0_NoReps.csv",
    ("he", "Codestral", "Direct"): "CodeStral/HumanEval/Codestral_HumanEval_T0_NoReps.csv",
    ("he", "LLama8B", "CoT"): "LLama/8B/HumanEval/results_HumanEval_llama-3.1-8b_NoReps.csv",
    ("he", "LLama8B", "Direct"): "LLama/8B/HumanEval/results_HumanEvalD_llama-3.1-8b_NoReps.csv",
    ("he", "Qwen7B", "CoT"): "QwenCoder/7B/HumanEval/results_HumanEval_cot_qwen2.5-coder-7b_NoReps.csv",
    ("he", "Qwen7B", "Direct"): "QwenCoder/7B/HumanEval/results_HumanEvalD_qwen2.5-coder-7b_NoReps.csv",
    ("he", "CodeLLama7B", "CoT"): "CodeLLama/7B/HumanEval/results_HumanEval_codellama-7b-instruct_NoReps.csv",
    ("he", "CodeLLama7B", "Direct"): "CodeLLama/7B/HumanEval/results_HumanEvalD_codellama-7b-instruct_NoReps.csv",
    ("oop", "Gemini", "CoT"): "Gemini/Complex/Gemini_OOP_cot_T0_NoReps.csv",
    ("oop", "Gemini", "Direct"): "Gemini/Complex/Gemini_OOP_Direct_T0_NoReps.csv",
    ("oop", "Claude", "CoT"): "Claude/Complex/Claude_OOP_CoT_T0_NoReps.csv",
    ("oop", "Claude", "Direct"): "Claude/Complex/OOP_Direct_T0_NoReps.csv",
    ("oop", "GPT4o", "CoT"): "GPT/Complex/GPT_OOP_cot_T0_NoReps.csv",
    ("oop", "GPT4o", "Direct"): "GPT/Complex/GPT4o_OOP_Direct_T0_NoReps.csv",
    ("oop", "LLama70B", "CoT"): "LLama/70B/Complex/results_OOPCoT_llama-3.1-70b_NoReps.csv",
    ("oop", "LLama70B", "Direct"): "LLama/70B/Complex/results_OOP_llama-3.1-70b_NoReps.csv",
    ("oop", "CodeLLama34B", "CoT"): "CodeLLama/34B/Complex/results_OOPCoT_codellama-34b-instruct_NoReps.csv",
    ("oop", "CodeLLama34B", "Direct"): "CodeLLama/34B/Complex/results_OOP_codellama-34b-instruct_NoReps.csv",
    ("oop", "Qwen32B", "CoT"): "QwenCoder/32B/Complex/results_OOPCoT_qwen2.5-coder-32b_NoReps.csv",
    ("oop", "Qwen32B", "Direct"): "QwenCoder/32B/Complex/results_OOP_qwen2.5-coder-32b_NoReps.csv",
    ("oop", "Codestral", "CoT"): "CodeStral/Complex/Codestral_OOP_CoT_T0_NoReps.csv",
    ("oop", "Codestral", "Direct"): "CodeStral/Complex/Codestral_OOP_Direct_T0_NoReps.csv",
    ("oop", "LLama8B", "CoT"): "LLama/8B/Complex/results_OOPCoT_llama-3.1-8b_NoReps.csv",
    ("oop", "LLama8B", "Direct"): "LLama/8B/Complex/LLama8B_OOP_T0_NoReps.csv",
    ("oop", "Qwen7B", "CoT"): "QwenCoder/7B/Complex/OOPCoT_NoReps.csv",
    ("oop", "Qwen7B", "Direct"): "QwenCoder/7B/Complex/OOP_NoReps.csv",
    ("oop", "CodeLLama7B", "CoT"): "CodeLLama/7B/Complex/results_OOPCoT_codellama-7b-instruct_NoReps.csv",
    ("oop", "CodeLLama7B", "Direct"): "CodeLLama/7B/Complex/results_OOP_codellama-7b-instruct_NoReps.csv",
    ("concurrency", "Gemini", "CoT"): "Gemini/Complex/Gemini_Concurrency_cot_T0_NoReps.csv",
    ("concurrency", "Gemini", "Direct"): "Gemini/Complex/Gemini_Concurrency_Direct_T0_NoReps.csv",
    ("concurrency", "Claude", "CoT"): "Claude/Complex/Claude_Concurrency_CoT_T0_NoReps.csv",
    ("concurrency", "Claude", "Direct"): "Claude/Complex/Concurrency_Direct_T0_NoReps.csv",
    ("concurrency", "GPT4o", "CoT"): "GPT/Complex/GPT4o_Concurrency_cot_T0_NoReps.csv",
    ("concurrency", "GPT4o", "Direct"): "GPT/Complex/GPT_Concurrency_T0_NoReps.csv",
    ("concurrency", "LLama70B", "CoT"): "LLama/70B/Complex/results_ConcurrencyCoT_llama-3.1-70b_NoReps.csv",
    ("concurrency", "LLama70B", "Direct"): "LLama/70B/Complex/results_Concurrency_llama-3.1-70b_NoReps.csv",
    ("concurrency", "CodeLLama34B", "CoT"):
        "CodeLLama/34B/Complex/results_ConcurrencyCoT_codellama-34b-instruct_NoReps.csv",
    ("concurrency", "CodeLLama34B", "Direct"):
        "CodeLLama/34B/Complex/results_Concurrency_codellama-34b-instruct_NoReps.csv",
    ("concurrency", "Qwen32B", "CoT"): "QwenCoder/32B/Complex/results_ConcurrencyCoT_qwen2.5-coder-32b_NoReps.csv",
    ("concurrency", "Qwen32B", "Direct"): "QwenCoder/32B/Complex/results_Concurrency_qwen2.5-coder-32b_NoReps.csv",
    ("concurrency", "Codestral", "CoT"): "CodeStral/Complex/Codestral_Concurrency_cot_T0_NoReps.csv",
    ("concurrency", "Codestral", "Direct"): "CodeStral/Complex/Codestral_Concurrency_T0_NoReps.csv",
    ("concurrency", "LLama8B", "CoT"): "LLama/8B/Complex/results_ConcurrencyCoT_llama-3.1-8b_NoReps.csv",
    ("concurrency", "LLama8B", "Direct"): "LLama/8B/Complex/LLama8B_Concurrency_T0_NoReps.csv",
    ("concurrency", "Qwen7B", "CoT"): "QwenCoder/7B/Complex/results_ConcurrencyCoT_qwen2.5-coder-7b_NoReps.csv",
    ("concurrency", "Qwen7B", "Direct"): "QwenCoder/7B/Complex/results_Concurrency_qwen2.5-coder-7b_NoReps.csv",
    ("concurrency", "CodeLLama7B", "CoT"):
        "CodeLLama/7B/Complex/results_ConcurrencyCoT_codellama-7b-instruct_NoReps.csv",
    ("concurrency", "CodeLLama7B", "Direct"):
        "CodeLLama/7B/Complex/results_Concurrency_codellama-7b-instruct_NoReps.csv",
}
AGREEMENT = 0.995
TOLERANCE = {"acc_hard": 0.15, "acc_mean": 0.15, "acc": 0.15, "sim": 0.01, "false_sim": 0.01}


@dataclass
class FileResult:
    topic: str
    model: str
    prompt: str
    rows: int = 0
    agree: int = 0  # our correct == the paper's Matched
    same_distance: int = 0  # our similarity == the paper's Distance (to 1e-9)
    disagreements: list[str] = field(default_factory=list)
    cells: dict = field(default_factory=dict)  # ours (points for accuracies, like the paper)
    admitted: dict | None = None  # --advanced: cells and rows on the rows the build admitted

    @property
    def share(self) -> float:
        return self.agree / self.rows if self.rows else 0.0


def read_file(source: str, topic: str, model: str, prompt: str) -> list[dict] | None:
    """The rows of one published file, from the gzipped copies (``results:DIR``) or a clone
    (``repo:PATH``: a work tree with ``Results/``, or a bare git dir read with ``git show``)."""
    csv.field_size_limit(sys.maxsize)
    kind, _, where = source.partition(":")
    if kind == "results":
        path = Path(where) / f"{topic}_{model}_{prompt}_NoReps.csv.gz"
        if not path.is_file():
            return None
        with gzip.open(path, "rt", encoding="utf-8", newline="") as fh:
            return list(csv.DictReader(fh))
    relative = "Results/" + REPO_PATHS[(topic, model, prompt)]
    if (Path(where) / relative).is_file():
        with open(Path(where) / relative, encoding="utf-8", newline="") as fh:
            return list(csv.DictReader(fh))
    shown = subprocess.run(["git", "-C", where, "show", f"HEAD:{relative}"], capture_output=True)
    if shown.returncode:
        return None
    return list(csv.DictReader(io.StringIO(shown.stdout.decode("utf-8"), newline="")))


def answer_of(actual: str) -> list:
    """The published ``Actual`` as a trace answer: ints, a concurrent segment as a nested list
    in the published order (read by the bounded parser, as the paper's ``parse_list``)."""
    out: list = []
    segment: list | None = None
    for token in coconut.concurrency_tokens(actual):
        if token == "(":
            segment = []
            out.append(segment)
        elif token == ")":
            segment = None
        else:
            (segment if segment is not None else out).append(int(token))
    return out


def write_inputs(rows: list[dict], topic: str, directory: Path) -> Path:
    """A dataset (tasks.jsonl) and an answers file for one published file's rows."""
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / "tasks.jsonl", "w", encoding="utf-8") as tasks, \
            open(directory / "answers.jsonl", "w", encoding="utf-8") as answers:
        for index, row in enumerate(rows):
            group = row["HumanEval_ID"].replace("/", "-") if topic == "he" else f"{row['Filename']}"
            task_id = make_id("trace", f"coconut-{topic}", f"{group}/{index}", "trace")
            record = {
                "id": task_id, "family": "trace", "arm": "trace",
                "source_id": f"coconut-{topic}/{group}", "language": "python",
                "prompt_fields": {"program": "", "topic": TOPICS[topic]},
                "answer": answer_of(row["Actual"]), "answer_kind": "lines", "metrics": {},
                "provenance": {"published_row": index, "segment_order": "observed"},
            }
            tasks.write(json.dumps(record) + "\n")
            answers.write(json.dumps({"id": task_id, "response": row["Predicted"]}) + "\n")
    return directory


def grade_file(rows: list[dict], topic: str, model: str, prompt: str, work: Path, use_cli: bool) -> FileResult:
    variant = coconut.VARIANT if prompt == "CoT" else coconut.DIRECT_VARIANT
    directory = write_inputs(rows, topic, work / f"{topic}_{model}_{prompt}")
    if use_cli:
        run = subprocess.run([sys.executable, "-m", "execbench.cli", "grade", str(directory), "--answers",
                              str(directory / "answers.jsonl"), "--variant", variant, "--json",
                              "-o", str(directory / "results.jsonl")], capture_output=True, text=True, check=True)
        summary = json.loads(run.stdout)
        with open(directory / "results.jsonl", encoding="utf-8") as fh:
            graded = [(r["correct"], r["similarity"]) for r in map(json.loads, fh)]
    else:
        results = list(grade_tasks(read_tasks(directory), read_answers(directory / "answers.jsonl"), variant,
                                       family_of=registry.get))
        summary = summarize(results, variant, family_of=registry.get)
        graded = [(score.correct, score.similarity) for _, score in results]
    out = FileResult(topic, model, prompt, rows=len(rows))
    for index, (row, (correct, similarity)) in enumerate(zip(rows, graded, strict=True)):
        if correct == (row["Matched"] == "True"):
            out.agree += 1
        else:
            out.disagreements.append(f"row {index}: paper {row['Matched']}, execbench {correct}")
        if abs(similarity - float(row["Distance"])) <= 1e-9:
            out.same_distance += 1
    paper = summary["families"]["trace"]["paper"]
    if topic == "he":
        t1 = paper["table_1"]
        out.cells = {"acc_hard": 100 * t1["acc_hard"], "acc_mean": 100 * t1["acc_mean"], "sim": t1["sim"],
                     "false_sim": t1["false_sim"], "tasks": t1["tasks"]}
    else:
        t2 = paper["table_2"][TOPICS[topic]]
        out.cells = {"acc": 100 * t2["acc"], "sim": t2["sim"]}
    return out


def printed(result: FileResult) -> dict[str, float]:
    if result.topic == "he":
        return dict(zip(TABLE_1_COLUMNS, TABLE_1[result.model][result.prompt]))
    return dict(zip(("acc", "sim"), TABLE_2[TOPICS[result.topic]][result.model][result.prompt]))


def off_cells(result: FileResult) -> list[tuple[str, float, float, bool]]:
    """(column, ours, printed, documented: a misprint or an explained difference) of every cell outside
    the tolerance."""
    out = []
    for column, value in printed(result).items():
        ours = result.cells[column]
        if abs(round(ours, 6) - value) > TOLERANCE[column] + 1e-9:
            key = (result.topic, result.model, result.prompt, column)
            out.append((column, ours, value, key in MISPRINTS or key in EXPLAINED))
    return out


def run(source: str, topics: list[str], use_cli: bool = False,
        admitted: dict[str, set[int]] | None = None) -> list[FileResult]:
    """Grade every published file of ``topics``; ``admitted`` (topic -> published row numbers a
    coconut-advanced build admitted) also grades the advanced files on those rows only."""
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for topic in topics:
            for model in MODELS:
                for prompt in PROMPTS:
                    rows = read_file(source, topic, model, prompt)
                    if rows is None:
                        continue
                    result = grade_file(rows, topic, model, prompt, Path(tmp), use_cli)
                    keep = (admitted or {}).get(TOPICS[topic])
                    if keep is not None and topic != "he":
                        kept = [row for index, row in enumerate(rows) if index in keep]
                        part = grade_file(kept, topic, model, prompt, Path(tmp) / "admitted", use_cli)
                        result.admitted = {**part.cells, "rows": len(kept)}
                    results.append(result)
    return results


def advanced_summary(repo: Path, dataset: Path) -> dict[str, dict]:
    """Per topic of a coconut-advanced build: the paper's traces, the admitted ones (their
    published row numbers), rejections by stage, and built keys equal to the published trace."""
    out = {topic: {"paper": coconut.PAPER_TRACES[topic], "published": 0, "admitted": set(), "equal": 0,
                   "rejected": Counter()} for topic in coconut_advanced.CATEGORIES.values()}
    published = {(row.topic, row.index): row for row in coconut_advanced.rows(repo)}
    for topic, _ in published:
        out[topic]["published"] += 1
    for task in read_tasks(dataset):
        topic, row = task.prompt_fields["topic"], task.provenance.get("paper_row")
        if not task.source_id.startswith(coconut_advanced.SOURCE + "/") or (topic, row) not in published:
            continue
        out[topic]["admitted"].add(row)
        paper = coconut_advanced.published_trace(published[(topic, row)].executed)
        out[topic]["equal"] += task.answer == (canonical_trace(paper) if topic == coconut.CONCURRENCY else paper)
    for record in read_rejected(dataset):
        parts = record["candidate"].split("/")
        if parts[0] == coconut_advanced.SOURCE and parts[1] in out:
            out[parts[1]]["rejected"][record["stage"]] += 1
    return out


def render_advanced(summary: dict[str, dict], results: list[FileResult]) -> str:
    lines = ["Advanced topics, a coconut-advanced build: traces admitted / the paper's, rejected by stage, "
             "built keys equal to the published trace (concurrency: segments sorted)"]
    for topic, entry in summary.items():
        admitted = len(entry["admitted"])
        stages = ", ".join(f"{n} {stage}" for stage, n in entry["rejected"].most_common()) or "none"
        lines.append(f"  {topic:<12} {admitted:>4} / {entry['paper']:<4} (rows published: {entry['published']}); "
                     f"rejected: {stages}; equal: {entry['equal']} of {admitted}")
    for topic in ("oop", "concurrency"):
        part = [r for r in results if r.topic == topic and r.admitted is not None]
        if not part:
            continue
        shown = part[0].admitted["rows"]
        lines += ["", f"Table II ({topic}) from the published predictions: all {part[0].rows} rows (as printed) "
                      f"and the {shown} a build admits ({part[0].rows - shown} excluded)",
                  f"{'model':<20} {'prompt':<7} {'acc all':>8} {'acc adm.':>8} {'sim all':>8} {'sim adm.':>8}"]
        for r in part:
            lines.append(f"{LABELS[r.model]:<20} {r.prompt:<7} {r.cells['acc']:>8.1f} {r.admitted['acc']:>8.1f} "
                         f"{r.cells['sim']:>8.3f} {r.admitted['sim']:>8.3f}")
    return "\n".join(lines)


def render(results: list[FileResult]) -> str:
    lines = []
    he = [r for r in results if r.topic == "he"]
    if he:
        lines += ["Table I (HumanEval-Trace): execbench / paper; * outside ±0.15 / ±0.01, (m) documented misprint",
                  f"{'model':<20} {'prompt':<7} {'rows':>5} {'agree':>7} {'dist=':>6}  "
                  + "  ".join(f"{c:>15}" for c in TABLE_1_COLUMNS)]
        for r in he:
            lines.append(_row(r, TABLE_1_COLUMNS))
    for topic in ("oop", "concurrency"):
        part = [r for r in results if r.topic == topic]
        if part:
            lines += ["", f"Table II ({topic}): Acc Mean (%) and Sim over rows, execbench / paper",
                      f"{'model':<20} {'prompt':<7} {'rows':>5} {'agree':>7} {'dist=':>6}  "
                      + "  ".join(f"{c:>15}" for c in ("acc", "sim"))]
            for r in part:
                lines.append(_row(r, ("acc", "sim")))
    return "\n".join(lines)


def _row(r: FileResult, columns: tuple[str, ...]) -> str:
    want = printed(r)
    off = {c: misprint for c, _, _, misprint in off_cells(r)}
    cells = []
    for c in columns:
        mark = "" if c not in off else (" m" if off[c] else " *")
        precision = 1 if c.startswith("acc") else 3
        cells.append(f"{r.cells[c]:.{precision}f}/{want[c]:g}{mark}".rjust(15))
    return (f"{LABELS[r.model]:<20} {r.prompt:<7} {r.rows:>5} {100 * r.share:>6.2f}% {r.same_distance:>6}  "
            + "  ".join(cells))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--results", type=Path, default=DEFAULT_RESULTS, help="folder of the gzipped NoReps copies")
    where.add_argument("--repo", type=Path, help="a clone of the paper's repository (or a fetched bare git dir)")
    parser.add_argument("--topics", default="he,oop,concurrency", help="comma-separated: he, oop, concurrency")
    parser.add_argument("--cli", action="store_true", help="run `execbench grade` as a command for every file")
    parser.add_argument("--json", type=Path, help="write every figure here")
    parser.add_argument("--advanced", type=Path, help="a coconut-advanced build of --repo (needs a work tree)")
    args = parser.parse_args(argv)
    if args.advanced and not args.repo:
        parser.error("--advanced needs --repo (the clone the dataset was built from)")
    source = f"repo:{args.repo}" if args.repo else f"results:{args.results}"
    topics = [t for t in args.topics.split(",") if t]
    started = time.monotonic()
    advanced = advanced_summary(args.repo, args.advanced) if args.advanced else None
    admitted = {topic: entry["admitted"] for topic, entry in advanced.items()} if advanced else None
    results = run(source, topics, args.cli, admitted)
    if not results:
        print(f"no published files found at {source}", file=sys.stderr)
        return 2
    print(render(results))
    if advanced:
        print("\n" + render_advanced(advanced, results))
    failing = [r for r in results if r.share < AGREEMENT]
    unexplained = [(r, c) for r in results for c in off_cells(r) if not c[3]]
    misprints = [(r, c) for r in results for c in off_cells(r) if c[3]]
    total = sum(r.rows for r in results)
    print(f"\n{len(results)} files, {total} rows: verdicts agree on {sum(r.agree for r in results)} "
          f"({100 * sum(r.agree for r in results) / total:.2f} %), similarities equal on "
          f"{sum(r.same_distance for r in results)}; lowest file agreement "
          f"{100 * min(r.share for r in results):.2f} %; cells off: {len(unexplained)} unexplained, "
          f"{len(misprints)} documented (misprints or explained); {time.monotonic() - started:.1f} s")
    for key, why in EXPLAINED.items():
        if any((r.topic, r.model, r.prompt) == key[:3] for r in results):
            print(f"  explained: {' '.join(key)}: {why}")
    for r, (column, ours, value, _) in unexplained:
        print(f"  unexplained: {r.topic} {r.model} {r.prompt} {column}: {ours:.3f} vs {value}")
    if args.json:
        figures: dict = {"files": [{**r.__dict__, "printed": printed(r)} for r in results]}
        if advanced:
            figures["advanced"] = {topic: {**entry, "admitted": sorted(entry["admitted"])}
                                   for topic, entry in advanced.items()}
        args.json.write_text(json.dumps(figures, indent=1))
    return 1 if failing or unexplained else 0


if __name__ == "__main__":
    raise SystemExit(main())
