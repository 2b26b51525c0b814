"""The state family's Python job; runs INSIDE the sandbox, as a handler of the job runner.

:func:`run_program` (``execbench.families.state._runner:run_program``, see
:mod:`execbench.sandbox.jobs`) runs ``args["program"]`` (a file in the job's directory) as
``__main__`` (fresh module, ``sys.argv = [program]``; or, with ``args["instrumented"]``, an
instrumented copy under the clean program's file name and line numbers) with the job's stdin, optionally
measured (``args["measure"]``: ``{"state": bool, "max_line_events": N, "state_budget":
N}``: the tracer's opcode and line-event counts of the program's own frames, and the state
meter of :mod:`execbench.tracing.state`), and returns ``{"metrics": ..., "dump": ...,
"dump_error": ...}`` (``dump``: the value of the global ``args["dump_global"]``, profiling
runs). A program that exits non-zero ends the job with that code. The parent validates the
returned record (:func:`execbench.families.state.jobs.checked`): the program ran in the
same process.
"""

from __future__ import annotations

import ast
import builtins
import os
import sys
import traceback
import types
from typing import TYPE_CHECKING

from execbench.sandbox import wire
from execbench.tracing.state import StateMeter   # imported before the runner forks (warm)
from execbench.tracing.tracer import TraceLimits, Tracer

if TYPE_CHECKING:  # types only: the sandbox loads nothing more
    from execbench.families.state.records import Measure, PythonJobArgs, RunMetrics, RunRecord


HELPERS = "_checkpoint"  # the instrumentation's names (instrument_py.py): not the program's


def _measuring_tracer(program: str, measure: Measure) -> tuple[Tracer, StateMeter | None]:
    """The tracer of a measured run: opcodes and line events of the program's own frames
    (not of ``_checkpoint`` helpers), every depth, no line list, the program stopped at the
    cap; plus the state meter when ``measure["state"]``."""
    meter = StateMeter([program], budget=int(measure.get("state_budget", 300_000)), hidden_prefix=HELPERS) \
        if measure.get("state", False) else None
    cap = int(measure.get("max_line_events", 2_000_000))
    limits = TraceLimits(max_line_events=cap, max_calls=sys.maxsize)
    tracer = Tracer([program], limits=limits, record_calls=False, count_opcodes=True, summarize_values=False,
                    record_lines=False, skip_prefix=HELPERS, observer=meter, stop_on_cap=True)
    return tracer, meter


def _measured(tracer: Tracer, meter: StateMeter | None) -> RunMetrics:
    result = tracer.result()
    out: RunMetrics = {"status": result["status"]}
    if "opcodes" in result:
        out["opcodes"] = result["opcodes"]
    if "line_events" in result:
        out["line_events"] = result["line_events"]
    if "too_large" in result:
        out["too_large"] = result["too_large"]
    if meter is not None:
        state = meter.result()
        out.update({"peak_state": state["peak_state"], "state_load": state["state_load"],
                    "state_stride": state["state_stride"], "state_samples": state["state_samples"],
                    "state_work": state["state_work"]})
    return out


def _compiled(program: str, args: PythonJobArgs) -> types.CodeType:
    """The program file, or (``args["instrumented"]``: an instrumented text and the line each of
    its lines runs under, ``instrument_py.executed_lines``) the instrumented text compiled with
    the clean program's line numbers and file name: the file on disk is the clean program."""
    instrumented = args.get("instrumented")
    if instrumented is None:
        with open(program, encoding="utf-8") as fh:
            return compile(fh.read(), program, "exec", dont_inherit=True)  # its own __future__ flags only
    lines = instrumented["lines"]
    tree = ast.parse(instrumented["text"])
    for node in ast.walk(tree):
        for attr in ("lineno", "end_lineno"):
            value = getattr(node, attr, None)
            if isinstance(value, int) and 1 <= value <= len(lines):
                setattr(node, attr, lines[value - 1])
    return compile(tree, program, "exec", dont_inherit=True)


def run_program(args: PythonJobArgs) -> RunRecord:
    """The handler (see the module docs)."""
    encode, _ = wire.private()   # the dump's serialiser, bound before the program runs
    program = os.path.abspath(args["program"])
    sys.argv = [program]
    sys.path[0] = os.path.dirname(program)
    module = types.ModuleType("__main__")
    module.__file__ = program
    module.__builtins__ = builtins  # type: ignore[attr-defined]  # ModuleType accepts it at run time
    sys.modules["__main__"] = module
    namespace = module.__dict__
    measure = args.get("measure")
    tracer = meter = None
    code = 0
    try:
        compiled = _compiled(program, args)
        if measure is not None:
            tracer, meter = _measuring_tracer(program, measure)
            tracer.start()
        try:
            exec(compiled, namespace)  # noqa: S102 - the program under test, inside the sandbox
        finally:
            if tracer is not None:
                tracer.stop()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if exc.code is not None and not isinstance(exc.code, int):
            print(exc.code, file=sys.stderr)
    except BaseException as exc:  # noqa: BLE001 - reported through the exit code and stderr
        if tracer is not None and tracer.too_large:
            code = 0  # the tracer stopped the run: its result says too_large
        else:
            traceback.print_exc()
            code = 1
        del exc
    try:
        sys.stdout.flush()
    except BaseException:  # noqa: BLE001 - the program's failure is the result, whatever it is
        code = code or 1
    if code != 0:
        raise SystemExit(code)
    record: RunRecord = {}
    if tracer is not None:
        record["metrics"] = _measured(tracer, meter)
    name = args.get("dump_global")
    if name:
        try:
            value = namespace.get(name)
            encode(value)   # plain JSON (TypeError, ValueError otherwise); the runner sends it so
            record["dump"] = value
        except (TypeError, ValueError, RecursionError) as exc:
            record["dump_error"] = str(exc)
    return record
