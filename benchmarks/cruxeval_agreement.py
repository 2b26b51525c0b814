"""Agreement of execbench's cruxeval grader with CRUXEval's own grader (issue 13).

Material (not shipped; every developer and CI has it): ``../shared/reference/cruxeval/``
holds the Qwen2.5-Coder team's published generations for the 1.5B base model
(``qwen2.5-coder-1.5b-base.{output,input}-cot.generations.json``) and CRUXEval's verdict
per sample (``...scored.json``: ``scored``, ``extracted``, ``pass_at_1``).

Steps: build the dataset (``execbench build cruxeval cruxeval``, unless ``--dataset``);
convert each generation to an answer ``{"id", "response"}`` whose response is the model's
continuation (the text after the generation's last ``[/PYTHON]\\n[THOUGHT]``); run
``execbench grade DATASET --answers FILE -o RESULTS --json``; compare per sample with
CRUXEval's verdict. A sample without a task (an input-arm problem whose arguments have no
literal form) counts as wrong, like a failed sample in CRUXEval's pass@1 over 800.

    python benchmarks/cruxeval_agreement.py [--reference DIR] [--dataset DIR] [--json OUT]
                                            [--codellama-scored DIR]

Prints per mode: pass@1 (execbench and CRUXEval's), per-sample agreement, and every
disagreement with the graded details. Exit code 1 when a mode misses the targets (pass@1
within 0.25 points, agreement >= 99.5%).
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_REFERENCE = ROOT.parent / "shared" / "reference" / "cruxeval"
MODEL = "qwen2.5-coder-1.5b-base"
MODES = {"output": "output-prediction", "input": "input-prediction"}
MARK = "[/PYTHON]\n[THOUGHT]"
TARGET_POINTS, TARGET_AGREEMENT = 0.25, 0.995


def continuation(generation: str) -> str:
    cut = generation.rfind(MARK)
    return generation[cut + len(MARK):] if cut >= 0 else generation


def answers(reference: Path) -> tuple[list[dict], dict[str, dict]]:
    rows, scored = [], {}
    for mode, arm in MODES.items():
        generations = json.loads((reference / f"{MODEL}.{mode}-cot.generations.json").read_text())
        scored[mode] = json.loads((reference / f"{MODEL}.{mode}-cot.scored.json").read_text())
        for sample, texts in generations.items():
            rows.append({"id": f"cruxeval/cruxeval/{sample}#{arm}", "response": continuation(texts[0])})
    return rows, scored


PY39_METHODS = {"removeprefix", "removesuffix"}  # str methods new in Python 3.9


def uses_py39_methods(code: str) -> bool:
    return any(isinstance(node, ast.Attribute) and node.attr in PY39_METHODS for node in ast.walk(ast.parse(code)))


def cause(row: dict, code: str, rejected: dict[str, str]) -> str:
    """Why execbench and CRUXEval's scored file disagree on a sample (or "unexplained")."""
    if row["status"] == "no task":
        return f"no input-arm task: {rejected.get(row['sample'], 'not built')}"
    if row["execbench"] and not row["cruxeval"] and uses_py39_methods(code):
        return ("f calls str.removeprefix/removesuffix (new in Python 3.9); the scored file was made under an "
                "older Python, where the call raises AttributeError")
    return "unexplained"


def execbench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "execbench.cli", *args], check=True, capture_output=True, text=True)


def compare(reference: Path, dataset: Path | None, work: Path) -> dict:
    timings = {}
    if dataset is None:
        dataset = work / "dataset"
        started = time.perf_counter()
        execbench("build", "cruxeval", "cruxeval", "-o", str(dataset))
        timings["build_seconds"] = round(time.perf_counter() - started, 1)
    rows, scored = answers(reference)
    answers_file, results_file = work / "answers.jsonl", work / "results.jsonl"
    answers_file.write_text("".join(json.dumps(row) + "\n" for row in rows))
    started = time.perf_counter()
    summary = json.loads(execbench("grade", str(dataset), "--answers", str(answers_file),
                                   "-o", str(results_file), "--json").stdout)
    timings["grade_seconds"] = round(time.perf_counter() - started, 1)
    results = {r["id"]: r for r in map(json.loads, results_file.read_text().splitlines())}
    rejected = {}
    for line in (dataset / "rejected.jsonl").read_text().splitlines():
        record = json.loads(line)
        rejected[record.get("cruxeval_id", record["candidate"])] = record["reason"]
    codes = {row["id"]: row["code"] for row in map(json.loads, (reference / "cruxeval.jsonl").read_text().splitlines())}
    report = {"timings": timings, "summary": summary, "modes": {}}
    for mode, arm in MODES.items():
        verdicts = scored[mode]["scored"]
        disagreements, correct = [], 0
        for sample, (cruxeval_verdict, *_) in verdicts.items():
            result = results.get(f"cruxeval/cruxeval/{sample}#{arm}")
            ours = bool(result and result["correct"])
            correct += ours
            if ours != cruxeval_verdict:
                disagreements.append({
                    "sample": sample, "cruxeval": cruxeval_verdict, "execbench": ours,
                    "status": result["status"] if result else "no task",
                    "extracted": result["extracted"] if result else None,
                    "cruxeval_extracted": scored[mode]["extracted"][sample][0][:300],
                })
                disagreements[-1]["cause"] = cause(disagreements[-1], codes[sample], rejected)
        n = len(verdicts)
        report["modes"][mode] = {
            "n": n, "pass_at_1": round(100 * correct / n, 3), "cruxeval_pass_at_1": scored[mode]["pass_at_1"],
            "agreement": round(1 - len(disagreements) / n, 5), "disagreements": disagreements,
            # the scored file's own evidence of its interpreter: verdicts on problems whose f uses 3.9 methods
            "py39_problems_scored_true": sum(verdicts[s][0] for s in verdicts if uses_py39_methods(codes[s])),
            "py39_problems": sum(uses_py39_methods(codes[s]) for s in verdicts),
        }
        version_only = [d for d in disagreements if d["cause"].startswith("f calls str.remove")]
        report["modes"][mode]["agreement_same_python"] = round(1 - (len(disagreements) - len(version_only)) / n, 5)
    return report


def compare_samples(scored_dir: Path, dataset: Path) -> dict:
    """CRUXEval's own published CodeLlama-7B samples (its repository's
    ``samples/evaluation_results/sample_scored_codellama-7b_temp0.2_{output,input}.json``: 10
    extracted answers per problem and CRUXEval's verdict on each, scored by CRUXEval's authors),
    graded in-process with ``grade_many``. Each extracted answer is put back into an assertion
    in an ``[ANSWER]`` block (``assert f(<input>) == <answer>`` / ``assert <answer> == <output>``)."""
    from execbench import registry
    from execbench.contract import BatchGrading
    from execbench.dataset import read_tasks

    tasks = {task.id: task for task in read_tasks(dataset)}
    batch = registry.get("cruxeval").capability(BatchGrading)
    assert batch is not None
    report = {}
    for mode, arm in MODES.items():
        data = json.loads((scored_dir / f"sample_scored_codellama-7b_temp0.2_{mode}.json").read_text())
        pairs, keys = [], []
        for sample, answers_ in data["raw_generations"].items():
            task = tasks.get(f"cruxeval/cruxeval/{sample}#{arm}")
            for index, answer in enumerate(answers_):
                keys.append((sample, index))
                if task is None:
                    pairs.append(None)
                    continue
                if arm == "output-prediction":
                    text = f"[ANSWER]\nassert {task.prompt_fields['call']} == {answer}\n[/ANSWER]"
                else:
                    text = f"[ANSWER]\nassert {answer} == {task.prompt_fields['output']}\n[/ANSWER]"
                pairs.append((task, text))
        started = time.perf_counter()
        scores = batch.grade_many([p for p in pairs if p is not None])
        seconds = time.perf_counter() - started
        verdicts: dict[str, list[bool]] = {}
        it = iter(scores)
        for (sample, _), pair in zip(keys, pairs):
            verdicts.setdefault(sample, []).append(bool(next(it).correct) if pair is not None else False)
        disagreements, ours_pass, theirs_pass, compared = [], 0.0, 0.0, 0
        for sample, theirs in data["raw_scored_generations"].items():
            ours = verdicts[sample]
            ours_pass += sum(ours) / len(ours)
            theirs_pass += sum(theirs) / len(theirs)
            if len(theirs) != len(ours):  # CRUXEval drops input answers without "f(" unless none passes
                if sum(theirs) != sum(ours):
                    disagreements.append({"sample": sample, "cruxeval": theirs, "execbench": ours})
                compared += len(ours)
                continue
            compared += len(ours)
            for index, (a, b) in enumerate(zip(theirs, ours)):
                if a != b:
                    disagreements.append({"sample": sample, "index": index, "cruxeval": a, "execbench": b,
                                          "answer": data["raw_generations"][sample][index][:200]})
        n = len(data["raw_scored_generations"])
        report[mode] = {"answers": compared, "pass_at_1": round(100 * ours_pass / n, 4),
                        "cruxeval_pass_at_1": round(data["pass_at_1"], 4),
                        "agreement": round(1 - len(disagreements) / compared, 5),
                        "disagreements": disagreements, "grade_seconds": round(seconds, 1)}
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, default=DEFAULT_REFERENCE)
    parser.add_argument("--dataset", type=Path, help="an existing cruxeval dataset (default: build one)")
    parser.add_argument("--json", type=Path, help="write the full report here")
    parser.add_argument("--codellama-scored", type=Path, help="also grade CRUXEval's own CodeLlama-7B samples: "
                        "a directory with its samples/evaluation_results/*.json (needs --dataset)")
    args = parser.parse_args(argv)
    if not (args.reference / "cruxeval.jsonl").exists():
        print(f"reference material not found in {args.reference}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="cruxeval-agreement-") as tmp:
        report = compare(args.reference, args.dataset, Path(tmp))
    ok = True
    for mode, data in report["modes"].items():
        print(f"{mode}-cot: pass@1 execbench {data['pass_at_1']:.3f} vs CRUXEval {data['cruxeval_pass_at_1']:.3f}; "
              f"agreement {100 * data['agreement']:.2f}% ({len(data['disagreements'])} of {data['n']} differ)")
        for row in data["disagreements"]:
            print(f"  {row['sample']}: CRUXEval {row['cruxeval']}, execbench {row['execbench']} ({row['status']}); "
                  f"extracted {row['cruxeval_extracted'][:120]!r}; cause: {row['cause']}")
        print(f"  problems whose f uses removeprefix/removesuffix: {data['py39_problems']}, scored true: "
              f"{data['py39_problems_scored_true']}; agreement when those calls are not counted: "
              f"{100 * data['agreement_same_python']:.2f}%")
        ok &= abs(data["pass_at_1"] - data["cruxeval_pass_at_1"]) <= TARGET_POINTS
        ok &= data["agreement"] >= TARGET_AGREEMENT
    print(f"timings: {report['timings']}")
    if args.codellama_scored:
        if args.dataset is None:
            parser.error("--codellama-scored needs --dataset")
        report["codellama"] = compare_samples(args.codellama_scored, args.dataset)
        for mode, data in report["codellama"].items():
            print(f"CodeLlama-7B {mode} (CRUXEval's own samples, {data['answers']} answers): pass@1 execbench "
                  f"{data['pass_at_1']:.3f} vs CRUXEval {data['cruxeval_pass_at_1']:.3f}; agreement "
                  f"{100 * data['agreement']:.3f}% ({len(data['disagreements'])} differ; {data['grade_seconds']} s)")
            for row in data["disagreements"]:
                print(f"  {row}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
