"""Build trace datasets with the builder running under CPython 3.11, 3.12 and 3.13; compare.

Traced programs always run under the pinned CPython 3.11 (docs/trace-format.md,
"Interpreter"), so ``tasks.jsonl`` must be byte-identical whatever interpreter runs the
builder. The other interpreters import execbench from ``src/`` and its (pure-Python)
dependencies from this virtual environment's site-packages.

    python benchmarks/trace_interpreters.py                      # humaneval and advanced, full
    python benchmarks/trace_interpreters.py --limit 5 humaneval  # quick
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import site
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
INTERPRETERS = [sys.executable, "/root/.pyenv/versions/3.12.1/bin/python", "/root/.pyenv/versions/3.13.0/bin/python"]
BUILD = """
import json, sys
from execbench import registry
from execbench.families.build import build_dataset
source, out, limit, jobs = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4])
trace = registry.get("trace")
manifest = build_dataset(trace, [source], out, options=dict(trace.default_options), jobs=jobs, limit=limit)
print(json.dumps({"tasks": manifest["tasks"], "rejected": manifest["rejected"], "python": manifest["python"],
                  "trace": manifest["settings"]["trace"]}))
"""


def build_under(interpreter: str, source: str, out: Path, limit: int | None, jobs: int) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), *site.getsitepackages()])}
    started = time.perf_counter()
    done = subprocess.run([interpreter, "-c", BUILD, source, str(out), json.dumps(limit), str(jobs)],
                          capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"{interpreter}: {done.stderr[-2000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["seconds"] = round(time.perf_counter() - started, 1)
    result["sha256"] = hashlib.sha256((out / "tasks.jsonl").read_bytes()).hexdigest()
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sources", nargs="*", default=["humaneval", "advanced"])
    parser.add_argument("--limit", type=int)
    parser.add_argument("-j", "--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    same = True
    with tempfile.TemporaryDirectory() as tmp:
        for source in args.sources:
            results = []
            for number, interpreter in enumerate(i for i in INTERPRETERS if os.path.isfile(i)):
                result = build_under(interpreter, source, Path(tmp) / f"{source}-{number}", args.limit, args.jobs)
                results.append(result)
                print(f"{source:10} builder {result['python']:7} traced under {result['trace']['interpreter']}: "
                      f"{result['tasks']} tasks, {result['rejected']} rejected, tasks.jsonl {result['sha256'][:16]} "
                      f"({result['seconds']} s)")
            identical = len({r["sha256"] for r in results}) == 1
            same &= identical
            print(f"{source:10} tasks.jsonl identical under all builders: {identical}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
