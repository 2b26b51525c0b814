"""Compare execbench's script-mode traces with CoCoNUT's published Advanced-Trace traces.

(Issue 11's check of case directories under the default build, lines mapped by content. The
same programs as a source with the paper's own line numbers: ``coconut-advanced:PATH``, compared
by ``benchmarks/coconut_tables.py --repo PATH --advanced DIR``.)

The paper's Advanced-Trace data lives in its public repository
(github:seal-research/structural-code-understanding-dataset; get it with the ``fetch``
tool, which leaves a git directory). Row i of
``Dataset/Advanced/Trace/program_traces_Python_<Category>_Lines.csv`` is the trace of
``Dataset/Advanced/Test/<Category>_prepared/Python/<Filename>_trace_<i % 5 + 1>.py`` run
as a script (the Recursion CSV is read from ``..._Recursion_Lines - Kopie.zip`` when the
CSV itself is missing from the snapshot). The programs are data here: each sampled row
becomes a case directory (``stdin = ["stdin.txt"]``, empty input), the trace family builds
them with its default options, and the answers are compared with the paper's traces.

Some programs use names they never import (``Lock``, ``Thread``, ``List``, ...): the
paper's runner provided them. Such a program gets one prelude line of imports above its
first line; its line numbers are mapped by content like every other program (the paper's
``Code_Indices`` shows the code without indentation, each line suffixed `` # N``), and the
prelude's own line event (a program without a main guard reports it) is removed before
comparing. The paper's ``'('`` / ``')'`` items delimit concurrent segments; both sides are
compared in canonical form (segments sorted).

    python benchmarks/advanced_reproduction.py --repo /work/.mirror/seal-research+structural-code-understanding-dataset/repo
    python benchmarks/advanced_reproduction.py --repo ... --per-category 20 --show 3
"""

from __future__ import annotations

import argparse
import csv
import difflib
import io
import json
import re
import subprocess
import sys
import tempfile
import time
import zipfile
from collections import Counter, defaultdict
from pathlib import Path

from execbench.families.trace import coconut_advanced

CATEGORIES = ("Concurrency", "OOP", "Recursion")
# the prelude for names the paper's runner provided, and its trace reader: shared with the source
prelude, paper_trace = coconut_advanced.prelude, coconut_advanced.published_trace
_SUFFIX = re.compile(r"\s*# \d+$")
_COMMENT = re.compile(r"\s*#[^'\"]*$")
def git_show(repo: Path, path: str) -> bytes | None:
    done = subprocess.run(["git", "--git-dir", str(repo), "show", f"HEAD:{path}"], capture_output=True)
    return done.stdout if done.returncode == 0 else None


def read_rows(repo: Path, category: str) -> list[dict]:
    csv.field_size_limit(sys.maxsize)
    base = f"Dataset/Advanced/Trace/program_traces_Python_{category}_Lines"
    raw = git_show(repo, base + ".csv")
    if raw is None:
        packed = git_show(repo, base + " - Kopie.zip")
        if packed is None:
            raise SystemExit(f"{base}.csv is not in {repo}")
        with zipfile.ZipFile(io.BytesIO(packed)) as archive:
            raw = archive.read(archive.namelist()[0])
    return list(csv.DictReader(io.StringIO(raw.decode("utf-8"))))


def _content(text: str) -> str:
    """A line's text without indentation and trailing comment (the paper shows neither the
    indentation nor the ``#START`` / ``#END`` markers)."""
    return _COMMENT.sub("", text).strip()


def line_map(paper_code: str, program: str) -> dict[int, int]:
    """Paper line number → program line number, pairing non-blank lines in order by content."""
    paper = []
    for number, text in enumerate(paper_code.split("\n"), 1):
        text = _content(_SUFFIX.sub("", text))
        if text:
            paper.append((number, text))
    ours = [(number, _content(text)) for number, text in enumerate(program.split("\n"), 1) if _content(text)]
    matcher = difflib.SequenceMatcher(None, [t for _, t in paper], [t for _, t in ours], autojunk=False)
    return {paper[b.a + k][0]: ours[b.b + k][0] for b in matcher.get_matching_blocks() for k in range(b.size)}


def remap(trace: list, mapping: dict[int, int]) -> list | None:
    out: list = []
    for item in trace:
        if isinstance(item, list):
            inner = remap(item, mapping)
            if inner is None:
                return None
            out.append(inner)
        elif item in mapping:
            out.append(mapping[item])
        else:
            return None
    return out


def canonical(trace: list) -> list:
    out: list = []
    for item in trace:
        out.append(sorted(flat(item)) if isinstance(item, list) else item)
    return out


def flat(trace: list) -> list[int]:
    return [x for item in trace for x in (flat(item) if isinstance(item, list) else [item])]


def convert(repo: Path, rows: dict[str, list[dict]], per_category: int | None, root: Path) -> dict[str, dict]:
    """Write the sampled rows as case directories under ``root``; returns row info by case id."""
    info: dict[str, dict] = {}
    for category, category_rows in rows.items():
        chosen = range(len(category_rows)) if per_category is None else range(min(per_category, len(category_rows)))
        for i in chosen:
            row = category_rows[i]
            path = f"Dataset/Advanced/Test/{category}_prepared/Python/{row['Filename']}_trace_{i % 5 + 1}.py"
            raw = git_show(repo, path)
            case_id = f"{category.lower()}-{i:03d}"
            record = {"category": category, "row": i, "file": path.rsplit("/", 1)[1], "prelude": False}
            info[case_id] = record
            if raw is None:
                record["skipped"] = "program file missing"
                continue
            source = raw.decode("utf-8")
            try:
                extra = prelude(source)
            except SyntaxError as exc:
                record["skipped"] = f"syntax error: {exc.msg}"
                continue
            if extra:
                source = extra + "\n" + source
                record["prelude"] = True
            record["program"] = source
            case = root / case_id
            case.mkdir(parents=True)
            (case / "program.py").write_text(source, encoding="utf-8")
            (case / "stdin.txt").write_text("")
            (case / "case.toml").write_text(
                f'id = "{case_id}"\nlanguage = "python"\nsource = "program.py"\nstdin = ["stdin.txt"]\n'
                f'topic = "{category.lower()}"\n')
    return info


def without(trace: list, line: int | None) -> list:
    out: list = []
    for item in trace:
        if isinstance(item, list):
            out.append(without(item, line))
        elif item != line:
            out.append(item)
    return out


def classify(ours: list, paper: list, line_one: int | None) -> str:
    if line_one is not None and canonical(without(ours, line_one)) == canonical(without(paper, line_one)):
        # CPython reports code compiled from a string (namedtuple's generated __new__, eval)
        # with filename "<string>"; the paper's tracer kept those events, as line 1
        return "paper counts line events of string-compiled code (namedtuple __new__, eval) as line 1"
    if (not any(isinstance(item, list) for item in paper) and any(isinstance(item, list) for item in ours)
            and Counter(flat(ours)) == Counter(flat(paper))):
        return "no #START marker: the paper keeps one observed interleaving, execbench its automatic segment"
    if flat(ours) == flat(paper):
        return "same lines, different segment boundaries"
    if Counter(flat(ours)) == Counter(flat(paper)):
        return "same multiset of lines, different order outside segments"
    if len(flat(ours)) < len(flat(paper)) and flat(paper)[: len(flat(ours))] == flat(ours):
        return "paper trace continues past ours"
    return "different lines"


def compare(info: dict[str, dict], rows: dict[str, list[dict]], dataset: Path) -> dict:
    tasks = {}
    with open(dataset / "tasks.jsonl", encoding="utf-8") as fh:
        for line in fh:
            task = json.loads(line)
            tasks[task["source_id"].split("/", 1)[1]] = task
    rejected = {}
    with open(dataset / "rejected.jsonl", encoding="utf-8") as fh:
        for line in fh:
            record = json.loads(line)
            rejected[record["candidate"].split("/", 1)[1].split("#")[0]] = record
    report: dict = defaultdict(lambda: {"rows": 0, "built": 0, "identical": 0, "reasons": Counter(), "examples": []})
    for case_id, record in info.items():
        entry = report[record["category"]]
        entry["rows"] += 1
        row = rows[record["category"]][record["row"]]
        if "skipped" in record:
            entry["reasons"][f"not converted: {record['skipped']}"] += 1
            continue
        task = tasks.get(case_id)
        if task is None:
            why = rejected.get(case_id, {})
            reason = re.sub(r"\d+", "N", why.get("reason", "missing")[:60])
            entry["reasons"][f"not built ({why.get('stage')}): {reason}"] += 1
            continue
        entry["built"] += 1
        mapping = line_map(row["Code_Indices"], record["program"])
        mapped = remap(paper_trace(row["ExecutedLines"]), mapping)
        ours = task["answer"]
        if record["prelude"] and ours[:1] == [1]:
            ours = ours[1:]  # the prelude line's own event (program without a main guard)
        if mapped is None:
            entry["reasons"]["paper line not in the program"] += 1
            continue
        if canonical(mapped) == canonical(ours):
            entry["identical"] += 1
            continue
        why = classify(ours, mapped, mapping.get(1))
        entry["reasons"][why] += 1
        entry["examples"].append({"case": case_id, "file": record["file"], "why": why,
                                  "paper": canonical(mapped), "execbench": canonical(ours)})
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=Path, required=True, help="git directory of the paper's repository")
    parser.add_argument("--per-category", type=int, help="first N rows of each category (default: all)")
    parser.add_argument("--categories", nargs="+", choices=CATEGORIES, default=list(CATEGORIES))
    parser.add_argument("--out", type=Path, help="keep case dirs and dataset here (default: a temp dir)")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--show", type=int, default=2, help="differing rows to print per category")
    args = parser.parse_args(argv)
    from execbench import registry
    from execbench.families.build import build_dataset

    started = time.perf_counter()
    rows = {category: read_rows(args.repo, category) for category in args.categories}
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp)
        info = convert(args.repo, rows, args.per_category, out / "cases")
        trace = registry.get("trace")
        build_dataset(trace, [str(out / "cases")], out / "dataset", options=dict(trace.default_options),
                      jobs=args.jobs)
        report = compare(info, rows, out / "dataset")
    total = Counter()
    for category in args.categories:
        entry = report[category]
        total.update({k: entry[k] for k in ("rows", "built", "identical")})
        share = 100 * entry["identical"] / entry["built"] if entry["built"] else 0.0
        print(f"{category:12} rows {entry['rows']:4}  built {entry['built']:4}  identical {entry['identical']:4}"
              f"  ({share:.1f}% of built)")
        for reason, count in entry["reasons"].most_common():
            print(f"    {count:4}  {reason}")
        for example in entry["examples"][: args.show]:
            print(f"      {example['case']} {example['file']}: {example['why']}\n"
                  f"        paper:     {json.dumps(example['paper'])[:200]}\n"
                  f"        execbench: {json.dumps(example['execbench'])[:200]}")
    print(f"{'all':12} rows {total['rows']:4}  built {total['built']:4}  identical {total['identical']:4}"
          f"   seconds: {time.perf_counter() - started:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
