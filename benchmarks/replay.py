"""The papers' own predictions replayed through the whole pipeline (issue 37).

CoCoNUT: each of the 20 published HumanEval prediction files (``../shared/reference/coconut/
results/he_<Model>_<CoT|Direct>_NoReps.csv.gz``) becomes a replay file of a ``--set
layout=coconut --set keep_duplicates=true`` HumanEval-Trace build (the k-th row of a call is
the k-th task of that call, as ``coconut_reproduction.py`` pairs them; the response is the
row's ``Predicted`` text), is replayed with ``execbench eval --model replay/FILE`` (CoT files
``--variant coconut``, Direct files ``coconut-direct``), and ``execbench report`` writes the
page and its ``report.tables.json``, whose Table I and Tables IV-V layouts are compared with
the printed tables.

CRUXEval (``--cruxeval``): the published generations of ``../shared/reference/cruxeval/``
become replay files of a ``execbench build cruxeval`` dataset (``sample_K`` -> the task of
problem K and the arm the file predicts; the first generation is the reply), replayed the
same way; the report's CRUXEval table is compared with the published pass@1 (the scored
files' mean of ``pass@1``).

    python benchmarks/replay.py --out /tmp/replay                      # build, replay 20 files, report
    python benchmarks/replay.py --out /tmp/replay --dataset DIR        # an existing layout=coconut build
    python benchmarks/replay.py --out /tmp/replay --files 2            # the first 2 models only (quick)
    python benchmarks/replay.py --out /tmp/replay --cruxeval           # also CRUXEval's generations

Prints the seconds of each stage (build, convert, replay, report), the issue's speed figure
(``replay + report``: the 20 ``execbench eval --model replay/...`` runs and ``execbench report``
over their logs, with the report's default 10,000 replicates/permutations; the build is timed
apart: pass ``--dataset`` to reuse one) and every compared cell;
exit status 1 when a cell that is not a named erratum (``coconut_tables.MISPRINTS``,
:data:`BUCKET_ERRATA`) is off by more than 0.15 points / 0.01 both from the printed value and
from the paper's own verdicts on the same replayed rows (``r``: the rows the build has a task
for, with the paper's ``Matched``/``Actual``; a cell can differ from the printed one only
through rows the build does not have or keys that differ: benchmarks/RESULTS.md, issue 37).
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from coconut_reproduction import call_keys
from coconut_tables import LABELS, MISPRINTS, MODELS, TABLE_1

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / ".." / "shared" / "reference"
RESULTS = REFERENCE / "coconut" / "results"
BUCKETS = ("1-3", "3-5", "5-10", "10-25", "25-40", "40+")
# Tables IV (Direct) and V (CoT) as printed: model -> six buckets (%)
TABLE_4 = {
    "Gemini": (93.8, 91.0, 84.8, 56.2, 24.0, 2.0), "Claude": (98.6, 86.6, 65.0, 26.6, 22.9, 0.7),
    "GPT4o": (76.6, 62.7, 44.6, 12.0, 3.1, 0.0), "LLama70B": (81.7, 59.7, 19.2, 1.3, 0.0, 0.0),
    "CodeLLama34B": (19.0, 25.4, 12.4, 0.0, 0.0, 0.0), "Qwen32B": (96.2, 63.4, 24.9, 0.9, 0.0, 0.0),
    "Codestral": (33.5, 42.5, 15.8, 0.4, 0.0, 0.0), "LLama8B": (20.0, 27.6, 7.3, 0.0, 0.0, 0.0),
    "Qwen7B": (7.9, 9.0, 3.4, 0.0, 0.0, 0.0), "CodeLLama7B": (0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
}
TABLE_5 = {
    "Gemini": (95.5, 88.8, 84.8, 54.9, 26.0, 1.3), "Claude": (97.2, 85.8, 71.8, 41.2, 30.2, 0.7),
    "GPT4o": (63.5, 83.6, 60.5, 16.7, 9.4, 0.0), "LLama70B": (72.4, 67.9, 46.9, 8.2, 4.2, 0.0),
    "CodeLLama34B": (15.2, 17.2, 8.5, 0.0, 0.0, 0.0), "Qwen32B": (84.5, 74.6, 50.3, 9.4, 0.0, 0.0),
    "Codestral": (48.3, 56.0, 24.9, 1.3, 1.0, 0.0), "LLama8B": (21.0, 38.8, 19.8, 0.0, 0.0, 0.0),
    "Qwen7B": (24.8, 30.6, 2.3, 0.0, 0.0, 0.0), "CodeLLama7B": (0.0, 0.1, 0.0, 0.0, 0.0, 0.0),
}
# Printed bucket cells the published rows contradict: (prompt, model, bucket) -> why
BUCKET_ERRATA = {
    ("CoT", "CodeLLama7B", "3-5"): "1 of the bucket's 134 rows is correct (0.746 %); printed 0.1",
}
VARIANTS = {"CoT": "coconut", "Direct": "coconut-direct"}
SAME_ROWS: dict[tuple[str, str], dict[str, float]] = {}  # (model, prompt) -> figures of the replayed published rows


def execbench(*args: str) -> None:
    subprocess.run([sys.executable, "-c", "from execbench.cli import main; main()", *args], check=True)


def read_tasks(dataset: Path) -> list[dict]:
    with open(dataset / "tasks.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def coconut_replies(rows: list[dict], tasks: list[dict]) -> tuple[list[dict], list[str], list[dict]]:
    """Replay lines for one published file, the rows that match no built task, and the rows that
    do: a row takes the first task of its call (by problem and call, formatting-independent) not
    yet taken."""
    by_call: dict[tuple[str, str], list[str]] = defaultdict(list)
    for task in tasks:
        fields = task["prompt_fields"]
        if fields.get("topic") not in (None, "humaneval"):
            continue
        problem = task["source_id"].split("/", 1)[1].replace("-", "/")
        for key in call_keys(fields["entry_point"], fields["call"][len(fields["entry_point"]) + 1:-1]):
            by_call[(problem, key)].append(task["id"])
    taken: set[str] = set()
    lines, unmatched, paired = [], [], []
    for row in rows:
        problem = row["HumanEval_ID"]
        chosen = next((task_id for key in call_keys(row["Name"], row["FunctionCall"])
                       for task_id in by_call.get((problem, key), []) if task_id not in taken), None)
        if chosen is None:
            unmatched.append(f"{problem} {row['Name']}({row['FunctionCall'][:60]})")
            continue
        taken.add(chosen)
        lines.append({"id": chosen, "response": row["Predicted"]})
        paired.append(row)
    return lines, unmatched, paired


def rows_figures(rows: list[dict]) -> dict[str, float]:
    """Table I and the Tables IV-V buckets computed from published rows with the paper's own
    verdicts and keys (``Matched``, ``Distance``, ``Actual``): what the report must show for the
    same rows where execbench's keys equal the paper's."""
    from execbench.analysis.tables import length_buckets
    import pandas as pd

    from execbench.families.trace.coconut import table_1

    summary = table_1([{"topic": None, "task_group": r["HumanEval_ID"], "correct": r["Matched"] == "True",
                        "similarity": float(r["Distance"] or 0.0)} for r in rows])
    out = {"acc_hard": 100 * summary["acc_hard"], "acc_mean": 100 * summary["acc_mean"], "sim": summary["sim"],
           "false_sim": summary["false_sim"]}
    lengths = pd.Series([len(json.loads(r["Actual"])) if r["Actual"].startswith("[") else None for r in rows])
    frame = pd.DataFrame({"bucket": length_buckets(lengths), "c": [r["Matched"] == "True" for r in rows]})
    for bucket, group in frame.dropna().groupby("bucket"):
        out[str(bucket)] = 100 * group["c"].mean()
    return out


def read_published(path: Path) -> list[dict]:
    csv.field_size_limit(sys.maxsize)
    with gzip.open(path, "rt", encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def write_lines(path: Path, lines: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    return path


def table(tables: list[dict], prefix: str) -> list[dict]:
    return [t for t in tables if t["title"].startswith(prefix)]


def rows_of(entry: dict) -> list[dict]:
    return [dict(zip(entry["columns"], row)) for row in entry["rows"]]


def compare_coconut(tables: list[dict], models: list[str]) -> int:
    """Print Table I and Tables IV-V from the report's data beside the printed ones; the number of
    cells off by more than the tolerance that are not named errata."""
    failures = 0
    layout = {r["Setting"]: r for t in table(tables, "Table I layout") for r in rows_of(t)}
    print(f"\nTable I (report / printed; m = documented misprint; r = off the printed value but equal to the "
          f"paper's own verdicts on the same replayed rows; X = neither)\n{'model':18} {'prompt':7} {'traces':>6}"
          f" {'acc_hard':>13} {'acc_mean':>13} {'sim':>13} {'false_sim':>13}")
    for model in models:
        for prompt, variant in VARIANTS.items():
            row = layout.get(f"{model} · {variant}")
            if row is None:
                print(f"{LABELS[model]:18} {prompt:7} missing from the report")
                failures += 1
                continue
            cells = []
            for column, label, printed in zip(("acc_hard", "acc_mean", "sim", "false_sim"),
                                              ("Acc Hard %", "Acc Mean %", "Sim", "False Sim"),
                                              TABLE_1[model][prompt]):
                got = row[label]
                tolerance = 0.151 if column.startswith("acc") else 0.0101
                erratum = ("he", model, prompt, column) in MISPRINTS
                ok = abs(got - printed) <= tolerance
                same = abs(got - SAME_ROWS.get((model, prompt), {}).get(column, float("nan"))) <= tolerance / 15
                failures += not ok and not erratum and not same
                cells.append(f"{got:6.3f}/{printed:<5}{' m' if erratum else ('  ' if ok else (' r' if same else ' X'))}")
            print(f"{LABELS[model]:18} {prompt:7} {row['Traces']:>6} " + " ".join(f"{c:>13}" for c in cells))
    for prompt, printed_table, name in (("Direct", TABLE_4, "IV"), ("CoT", TABLE_5, "V")):
        variant = VARIANTS[prompt]
        found = {r["Setting"]: r for t in table(tables, "Tables IV-V layout") if t["title"].endswith(variant)
                 for r in rows_of(t)}
        print(f"\nTable {name} ({prompt}; report / printed; e = documented erratum; r = equal to the paper's "
              "verdicts on the same rows)")
        for model in models:
            row = found.get(f"{model} · {variant}")
            if row is None:
                print(f"{LABELS[model]:18} missing from the report")
                failures += 1
                continue
            cells = []
            for bucket, printed in zip(BUCKETS, printed_table[model]):
                got = row.get(bucket)
                erratum = (prompt, model, bucket) in BUCKET_ERRATA
                ok = got is not None and abs(got - printed) <= 0.151
                same = got is not None and abs(got - SAME_ROWS.get((model, prompt), {}).get(bucket, float("nan"))) < 0.01
                failures += not ok and not erratum and not same
                cells.append(f"{'-' if got is None else f'{got:5.1f}'}/{printed:<5}"
                             f"{' e' if erratum else ('  ' if ok else (' r' if same else ' X'))}")
            print(f"{LABELS[model]:18} " + " ".join(cells))
    return failures


def coconut(args: argparse.Namespace, timings: dict[str, float]) -> list[tuple[Path, str]]:
    dataset = args.dataset
    if dataset is None:
        dataset = args.out / "humaneval-coconut"
        started = time.perf_counter()
        if not (dataset / "tasks.jsonl").is_file():
            execbench("build", "trace", "humaneval", "-o", str(dataset), "--set", "layout=coconut",
                      "--set", "keep_duplicates=true", "-j", str(args.jobs))
        timings["build"] = time.perf_counter() - started
    started = time.perf_counter()
    tasks = read_tasks(dataset)
    runs = []
    for model in MODELS[: args.files]:
        for prompt, variant in VARIANTS.items():
            rows = read_published(args.results / f"he_{model}_{prompt}_NoReps.csv.gz")
            lines, unmatched, paired = coconut_replies(rows, tasks)
            SAME_ROWS[(model, prompt)] = rows_figures(paired)
            path = write_lines(args.out / "replies" / prompt.lower() / f"{model}.jsonl", lines)
            print(f"{model} {prompt}: {len(rows)} published rows, {len(lines)} replies, {len(unmatched)} match no "
                  f"built task: {'; '.join(unmatched)}")
            runs.append((path, variant))
    timings["convert"] = time.perf_counter() - started
    return [(dataset, "")] + runs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--dataset", type=Path, help="a HumanEval build with layout=coconut, keep_duplicates=true")
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--files", type=int, default=len(MODELS), help="models (x2 prompts) to replay")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--cruxeval", action="store_true", help="also replay CRUXEval's published generations")
    parser.add_argument("--report-only", action="store_true", help="convert and compare, reusing OUT/logs")
    args = parser.parse_args(argv)
    args.out = args.out.resolve()
    timings: dict[str, float] = {}
    dataset_and_runs = coconut(args, timings)
    dataset = dataset_and_runs[0][0]
    logs = args.out / "logs"
    started = time.perf_counter()
    for path, variant in dataset_and_runs[1:] if not args.report_only else []:
        execbench("eval", str(dataset), "--model", f"replay/{path}", "--variant", variant, "--log-dir", str(logs),
                  "--display", "none")
    timings["replay"] = time.perf_counter() - started
    if args.cruxeval and not args.report_only:
        from cruxeval_replay import replay_cruxeval

        timings.update(replay_cruxeval(args.out, logs, args.jobs))
    started = time.perf_counter()
    execbench("report", str(logs), "-o", str(args.out / "report.html"))
    timings["report"] = time.perf_counter() - started
    tables = json.loads((args.out / "report.tables.json").read_text(encoding="utf-8"))
    failures = compare_coconut(tables, list(MODELS[: args.files]))
    if args.cruxeval:
        from cruxeval_replay import compare_cruxeval

        failures += compare_cruxeval(tables)
    print("\nseconds: " + ", ".join(f"{stage} {seconds:.0f}" for stage, seconds in timings.items()))
    if not args.report_only:  # the figure: replaying the files and writing the report (build excluded)
        print(f"replay + report: {timings['replay'] + timings['report']:.0f} s for {2 * args.files} CoCoNUT files "
              f"({len(dataset_and_runs) - 1} replays)")
    print(f"cells off (not errata): {failures}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
