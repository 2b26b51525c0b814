"""Parent-side tracing API: run a program under the tracer inside the sandbox.

The program text is written into the sandbox work dir as ``filename`` (line numbers in
traces refer to that exact text), with a JSON spec for :mod:`execbench.tracing.child`.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping, Sequence

import execbench
from execbench import sandbox
from execbench.sandbox import records
from execbench.tracing.tracer import TraceLimits

CHILD = ["-m", "execbench.tracing.child", "spec.json"]


@dataclass
class TraceRun:
    """What came back from one sandboxed tracing run."""

    ok: bool  # the child finished and wrote its result
    reason: str  # the sandbox's one-line reason when not ok
    result: dict[str, Any]  # the child's result.json (empty when not ok)
    stdout: bytes = b""
    stderr: bytes = b""
    sandbox: dict[str, Any] = field(default_factory=dict)


def _run(
    program: str,
    spec: dict[str, Any],
    *,
    filename: str,
    extra_files: Mapping[str, str | bytes],
    stdin: str | bytes,
    hash_seed: int,
    limits: sandbox.Limits,
    python: str | None = None,
) -> TraceRun:
    files: dict[str, str | bytes] = {filename: program, "spec.json": json.dumps(spec)}
    files.update(extra_files)
    env = {"PYTHONHASHSEED": str(hash_seed)}
    common = dict(stdin=stdin, files=files, collect=["result.json"], limits=limits)
    if python is None or os.path.realpath(python) == os.path.realpath(sys.executable):
        outcome = sandbox.run_python(CHILD, env=env, **common)
    else:  # another interpreter (tracing.interpreter): it imports execbench from our tree
        env["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.abspath(execbench.__file__)))
        outcome = sandbox.run([python, "-s", *CHILD], env=env, **common)
    raw = outcome.files.get("result.json")
    info = {"limit": outcome.limit, "duration": outcome.duration, "isolation": outcome.isolation}
    if raw is None or outcome.limit is not None:
        return TraceRun(False, outcome.reason(), {}, outcome.stdout, outcome.stderr, info)
    try:  # the program could have written result.json: bounded, envelope checked
        result = records.load_json(raw, max_bytes=limits.file_size_bytes, max_depth=200)
        module = records.check(result, {"module": dict}, {"calls": list, "script": dict},
                               where="result.json")["module"]
        records.check(module, {"status": str}, where="result.json module")
        if "script" in result:
            records.check(result["script"], {"status": str}, where="result.json script")
    except records.RecordError as exc:
        return TraceRun(False, f"malformed {exc}", {}, outcome.stdout, outcome.stderr, info)
    return TraceRun(True, outcome.reason(), result, outcome.stdout, outcome.stderr, info)


def _spec(mode: str, filename: str, extra: list[str], trace_limits: TraceLimits, **kw: Any) -> dict:
    return {"mode": mode, "files": [filename, *extra], "limits": asdict(trace_limits), **kw}


def trace_calls(
    program: str,
    calls: list[str],
    *,
    filename: str = "program.py",
    traced_files: Sequence[str] = (),
    extra_files: Mapping[str, str | bytes] = {},
    trace_limits: TraceLimits = TraceLimits(),
    record_calls: bool = False,
    count_opcodes: bool = False,
    call_timeout: int = 10,
    hash_seed: int = 0,
    limits: sandbox.Limits | None = None,
    python: str | None = None,
    collapse_comprehensions: bool = False,
) -> TraceRun:
    """Trace each call expression separately, from the same fresh module state.

    ``python``: the interpreter to trace under (default: this one; the trace family pins
    CPython 3.11, :mod:`execbench.tracing.interpreter`).

    ``result["calls"][i]`` holds ``status`` (ok/error/timeout/crash/too_large/tampered),
    ``lines`` (primary-file line events, concurrent segments as nested lists),
    ``line_events`` and, as asked, ``calls`` and ``opcodes``.
    """
    spec = _spec(
        "calls", filename, list(traced_files), trace_limits, calls=list(calls),
        record_calls=record_calls, count_opcodes=count_opcodes, call_timeout=call_timeout,
        collapse_comprehensions=collapse_comprehensions,
    )
    wall = max(30.0, call_timeout * len(calls) + 10)
    limits = limits or sandbox.Limits(cpu_seconds=wall, wall_seconds=wall)
    return _run(program, spec, filename=filename, extra_files=extra_files, stdin=b"",
                hash_seed=hash_seed, limits=limits, python=python)


def trace_script(
    program: str,
    stdin: str | bytes = b"",
    *,
    filename: str = "program.py",
    traced_files: Sequence[str] = (),
    extra_files: Mapping[str, str | bytes] = {},
    trace_limits: TraceLimits = TraceLimits(),
    record_calls: bool = False,
    count_opcodes: bool = False,
    hash_seed: int = 0,
    limits: sandbox.Limits | None = None,
    python: str | None = None,
    collapse_comprehensions: bool = False,
    start_after_main_guard: bool = False,
    segment_markers: bool = False,
) -> TraceRun:
    """Trace a whole run of ``program`` as ``__main__``; ``result["script"]`` has the trace,
    the run's stdout is :attr:`TraceRun.stdout`. ``start_after_main_guard``: record from the
    event after the ``if __name__ == "__main__":`` line's; ``segment_markers``: ``#START`` /
    ``#END`` comments delimit concurrent segments (see :mod:`execbench.tracing.script`)."""
    spec = _spec("script", filename, list(traced_files), trace_limits,
                 record_calls=record_calls, count_opcodes=count_opcodes,
                 collapse_comprehensions=collapse_comprehensions,
                 start_after_main_guard=start_after_main_guard, segment_markers=segment_markers)
    return _run(program, spec, filename=filename, extra_files=extra_files, stdin=stdin,
                hash_seed=hash_seed, limits=limits or sandbox.Limits(), python=python)
