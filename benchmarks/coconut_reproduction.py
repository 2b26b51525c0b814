"""Compare execbench's HumanEval-Trace answers with CoCoNUT's published traces.

Reads ``../shared/reference/coconut/HumanEval_trace.csv`` (the CoCoNUT authors' 1,083
HumanEval traces: ``HumanEval_ID``, ``FunctionCall`` (the call's arguments),
``ExecutedLines`` (JSON list), ``Code_Indices`` (the code as the paper shows it, each line
suffixed `` # N``)), builds (or reads) a HumanEval-Trace dataset with duplicate calls kept,
and reports how many paper rows match a task and how many of those traces are identical.

The paper's shown code has extra blank lines, so its line numbers are mapped by content:
strip the `` # N`` suffix, pair the non-blank lines with the program's non-blank lines in
order (their text must agree), and renumber the paper's trace. A paper row is
*comparable* when it matches a built task and every line of its trace maps.

    python benchmarks/coconut_reproduction.py                    # builds into a temp dir (-j 2)
    python benchmarks/coconut_reproduction.py --dataset DIR      # a build made with keep_duplicates=true
    python benchmarks/coconut_reproduction.py --problems 20      # only HumanEval/0..19 (quick)
"""

from __future__ import annotations

import argparse
import ast
import csv
import difflib
import json
import re
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_CSV = Path(__file__).resolve().parents[1] / ".." / "shared" / "reference" / "coconut" / "HumanEval_trace.csv"
_SUFFIX = re.compile(r"\s*# \d+$")


@dataclass
class Report:
    rows: int = 0  # paper rows read (within --problems)
    matched: int = 0  # rows whose call is a built task
    comparable: int = 0  # matched and every paper line maps onto the program
    identical: int = 0
    unmatched: list[str] = field(default_factory=list)
    unmappable: list[str] = field(default_factory=list)
    different: list[dict] = field(default_factory=list)

    @property
    def share(self) -> float:
        return self.identical / self.comparable if self.comparable else 0.0


def read_paper(path: Path) -> list[dict]:
    csv.field_size_limit(sys.maxsize)
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def call_keys(entry_point: str, arguments: str) -> list[str]:
    """Formatting-independent forms of ``entry_point(arguments)`` (AST dumps; never evaluated).

    The paper writes some argument lists as a tuple's repr (``('a', 'b')``, ``('x',)``), so
    a single parenthesised tuple argument also yields the key of its elements."""
    try:
        node = ast.parse(f"{entry_point}({arguments})", mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    if not isinstance(node, ast.Call):
        return []
    values = [*node.args, *(k.value for k in node.keywords)]
    keys = [ast.dump(ast.Tuple(values, ast.Load()))]
    if len(values) == 1 and isinstance(values[0], ast.Tuple) and arguments.lstrip().startswith("("):
        keys.append(ast.dump(ast.Tuple(values[0].elts, ast.Load())))
    return keys


def line_map(paper_code: str, program: str) -> dict[int, int]:
    """Paper line number → program line number: non-blank lines paired in order by content
    (``difflib`` alignment, so a docstring the paper displays differently, e.g. ``\\n``
    shown as a line break in HumanEval/51, leaves the other lines mapped)."""
    paper = []
    for number, text in enumerate(paper_code.split("\n"), 1):
        text = _SUFFIX.sub("", text).strip()
        if text:
            paper.append((number, text))
    ours = [(number, text.strip()) for number, text in enumerate(program.split("\n"), 1) if text.strip()]
    matcher = difflib.SequenceMatcher(None, [t for _, t in paper], [t for _, t in ours], autojunk=False)
    mapping = {}
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            mapping[paper[block.a + k][0]] = ours[block.b + k][0]
    return mapping


def compare(paper_rows: list[dict], tasks: list[dict], problems: int | None = None) -> Report:
    """``tasks``: task records of a HumanEval-Trace build made with keep_duplicates=true."""
    by_call: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for task in tasks:
        fields = task["prompt_fields"]
        problem = task["source_id"].split("/", 1)[1].replace("-", "/")
        arguments = fields["call"][len(fields["entry_point"]):]
        keys = call_keys(fields["entry_point"], arguments[1:-1])
        if keys:
            by_call[(problem, keys[0])].append(task)
    report = Report()
    used: dict[tuple[str, str], int] = defaultdict(int)
    for row in paper_rows:
        problem = row["HumanEval_ID"]
        if problems is not None and int(problem.split("/")[1]) >= problems:
            continue
        report.rows += 1
        label = f"{problem} {row['Name']}({row['FunctionCall']})"
        # the k-th paper row of a call ↔ the k-th task of that call
        key = next((k for k in call_keys(row["Name"], row["FunctionCall"])
                    if used[(problem, k)] < len(by_call.get((problem, k), []))), None)
        if key is None:
            report.unmatched.append(label)
            continue
        candidates = by_call[(problem, key)]
        task = candidates[used[(problem, key)]]
        used[(problem, key)] += 1
        report.matched += 1
        mapping = line_map(row["Code_Indices"], task["prompt_fields"]["program"])
        paper_trace = json.loads(row["ExecutedLines"])
        if any(line not in mapping for line in paper_trace):
            report.unmappable.append(label)
            continue
        report.comparable += 1
        mapped = [mapping[line] for line in paper_trace]
        if mapped == task["answer"]:
            report.identical += 1
        else:
            report.different.append({"row": label, "paper": mapped, "execbench": task["answer"]})
    return report


def build(out: Path, jobs: int, problems: int | None) -> list[dict]:
    from execbench import registry
    from execbench.families.build import build_dataset

    trace = registry.get("trace")
    options = {**trace.default_options, "keep_duplicates": True}
    build_dataset(trace, ["humaneval"], out, options=options, jobs=jobs, limit=problems)
    return read_tasks(out)


def read_tasks(directory: Path) -> list[dict]:
    with open(directory / "tasks.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--csv", type=Path, default=DEFAULT_CSV)
    parser.add_argument("--dataset", type=Path, help="an existing build (keep_duplicates=true); default: build now")
    parser.add_argument("--problems", type=int, help="only HumanEval/0..N-1")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--show", type=int, default=5, help="differing rows to print")
    args = parser.parse_args(argv)
    if not args.csv.is_file():
        print(f"no paper data at {args.csv}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    if args.dataset:
        tasks = read_tasks(args.dataset)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            tasks = build(Path(tmp) / "humaneval", args.jobs, args.problems)
    report = compare(read_paper(args.csv), tasks, args.problems)
    print(f"paper rows:            {report.rows}")
    print(f"matched to a task:     {report.matched}")
    print(f"comparable:            {report.comparable}  (line map failed for {len(report.unmappable)})")
    print(f"identical:             {report.identical}  ({100 * report.share:.1f}% of comparable)")
    print(f"tasks built:           {len(tasks)}   seconds: {time.perf_counter() - started:.0f}")
    for label in report.unmatched[: args.show]:
        print(f"  unmatched: {label[:120]}")
    for label in report.unmappable[: args.show]:
        print(f"  unmappable: {label[:120]}")
    for diff in report.different[: args.show]:
        print(f"  differs: {diff['row'][:100]}\n    paper:     {diff['paper'][:30]}\n    execbench: {diff['execbench'][:30]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
