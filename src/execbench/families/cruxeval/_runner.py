"""Job handlers of the cruxeval family; they run INSIDE the sandbox, never in the parent.

Each item is a job of the sandbox's job runner (:mod:`execbench.sandbox.jobs`, started by
:mod:`.run`): :func:`build_job` or :func:`grade_job` runs in a child forked from the
runner's warm interpreter, under the job's CPU, wall and memory limits, and returns the
item's result. Every step that runs the program starts from a fresh namespace (the
program's module code run again).

* ``build`` items (``code``, ``input``, ``output``): run ``f(<input>)`` and compare it with
  the recorded output the way CRUXEval's assertion does (``<output> == f(<input>)``); trace
  the same call from a fresh namespace (line events of the program's frames: the trace
  length); turn the call's arguments into literal text (``repr``, set elements sorted, that
  ``ast.literal_eval`` reads back type-strictly equal; a ``range`` as a list, a ``frozenset`` as a set) and run
  ``f`` on the arguments read back from that text, so the input-prediction arm has a
  literal answer that is known to work.
* ``loops`` of ``f`` (build items that have them): iteration counts per loop, then, for the
  loop with the most iterations (at least 2), the locals' canonical JSON when iteration
  K = iterations // 2 + 1 starts its body and at the first line after the loop: the state
  family's inside/post checkpoints, taken by a line tracer on ``f``'s first frame.
* ``grade`` items (``code``, tagged ``args``/``kwargs``/``expected``, see :mod:`.codec`):
  run ``f(*args, **kwargs)`` and compare with ``expected`` the same way. No text of the
  model reaches this process: the arguments arrive as data.

A result is ``{"status": "ok", ...}`` or ``{"status": "error", "error": ...}`` (the program
raised); a job that returns no result (a limit, a crash) is reported by the runner.
"""

from __future__ import annotations

import ast
import builtins
import json
import math
import sys
from types import FrameType
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # types only: the sandbox loads nothing more
    from _typeshed import TraceFunction
    from execbench.contract.jsontypes import JSONValue
    from execbench.families.cruxeval.records import (BuildArgs, BuildResult, CallResult, Checkpoint, GradeArgs,
                                                     GradeItem, LoopPass, LoopSpan, Problem, Snapshot)

PROGRAM = "/cruxeval/program.py"  # the code's file name for the tracer (no such file is needed)
MAX_REPR = 2000
MAX_FIELD_CHARS = 200  # a checkpoint field's canonical JSON, at most
# literal stand-ins tried for arguments without a literal form (kept only if f still returns the output)
_STAND_INS: dict[type, Callable[[Any], Any]] = {range: list, frozenset: set}


def _fresh(code: str) -> dict[str, object]:
    namespace: dict[str, object] = {"__name__": "__cruxeval__", "__builtins__": builtins}
    exec(compile(code, PROGRAM, "exec", dont_inherit=True), namespace)  # noqa: S102 - the benchmark's program, in the sandbox
    return namespace


def _call(namespace: dict[str, object], text: str) -> Any:
    return eval(compile(text, "<call>", "eval", dont_inherit=True), namespace)  # noqa: S307 - the benchmark's call, in the sandbox


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc)[:300]}"


def _repr(value: Any) -> str:
    try:
        text = repr(value)
    except BaseException as exc:  # noqa: BLE001 - the program's failure is the result, whatever it is
        return f"<repr failed: {_error(exc)}>"
    return text if len(text) <= MAX_REPR else text[:MAX_REPR] + "..."


def _equal(expected: Any, value: Any) -> tuple[bool, str | None]:
    """``assert expected == value`` (CRUXEval's order), as a boolean."""
    try:
        return bool(expected == value), None
    except BaseException as exc:  # noqa: BLE001 - the program's failure is the result, whatever it is
        return False, _error(exc)


def _canonical(value: Any, depth: int = 0) -> str:
    """``repr`` with set elements sorted by their text (a set's order depends on the hash seed)."""
    if depth > 100:
        raise ValueError("too deep")
    kind = type(value)
    if kind is set:
        return "{" + ", ".join(sorted(_canonical(v, depth + 1) for v in value)) + "}" if value else "set()"
    if kind is list:
        return "[" + ", ".join(_canonical(v, depth + 1) for v in value) + "]"
    if kind is tuple:
        inner = ", ".join(_canonical(v, depth + 1) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if kind is dict:
        return "{" + ", ".join(f"{_canonical(k, depth + 1)}: {_canonical(v, depth + 1)}" for k, v in value.items()) + "}"
    return repr(value)


def _literal_text(value: Any) -> str | None:
    """The canonical literal text of ``value`` if it reads back type-strictly equal, else None."""
    from execbench.grading.literal import values_equal

    try:
        text = _canonical(value)
        return text if values_equal(ast.literal_eval(text), value) else None
    except BaseException:  # noqa: BLE001 - the program's failure is the result, whatever it is
        return None


def _build(item: Problem, max_line_events: int) -> BuildResult:
    from execbench.tracing.tracer import TraceLimits, Tracer

    out: BuildResult = {"status": "ok"}
    code, call = item["code"], f"f({item['input']})"
    try:
        expected = ast.literal_eval(item["output"])
    except BaseException as exc:  # noqa: BLE001 - the program's failure is the result, whatever it is
        return {"status": "error", "error": f"the recorded output is not a literal: {_error(exc)}"}
    try:
        value = _call(_fresh(code), call)
    except BaseException as exc:  # noqa: BLE001 - the program's failure is the result, whatever it is
        return {"status": "error", "error": _error(exc)}
    out["equal"], out["compare_error"] = _equal(expected, value)
    out["returned"] = _repr(value)
    out["returned_literal"] = _literal_text(value) is not None
    # the trace length: line events of the program's frames during the call
    namespace = _fresh(code)
    tracer = Tracer([PROGRAM], limits=TraceLimits(max_line_events=max_line_events),
                    record_calls=False, summarize_values=False)
    tracer.start()
    try:
        _call(namespace, call)
    except BaseException:  # noqa: BLE001 - the untraced call succeeded; a cap stops this one
        pass
    finally:
        tracer.stop()
    traced = tracer.result()
    out["trace_length"] = traced["line_events"] if traced["status"] == "ok" else None
    out["trace_status"] = traced["status"]
    if item.get("loops"):
        out["checkpoint"] = _checkpoint(code, call, item["loops"])
    # a literal form of the arguments, checked by running f on it
    try:
        args, kwargs = _call(_fresh(code), f"(lambda *a, **k: (a, k))({item['input']})")
    except BaseException as exc:  # noqa: BLE001 - the program's failure is the result, whatever it is
        out["literal_error"] = f"the arguments cannot be evaluated: {_error(exc)}"
        return out
    parts = []
    named = [(str(position + 1), "", arg) for position, arg in enumerate(args)]
    named += [(name, f"{name}=", arg) for name, arg in kwargs.items()]
    for label, prefix, arg in named:
        text = _literal_text(arg)
        if text is None and type(arg) in _STAND_INS:
            text = _literal_text(_STAND_INS[type(arg)](arg))
        if text is None:
            out["literal_error"] = f"argument {label} has no literal form ({type(arg).__name__})"
            return out
        parts.append(prefix + text)
    literal = ", ".join(parts)
    try:
        function: Any = _fresh(code)["f"]
        again = function(*[ast.literal_eval(p) for p in parts[:len(args)]],
                                 **{k: ast.literal_eval(p.split("=", 1)[1]) for k, p in zip(kwargs, parts[len(args):])})
        out["literal_equal"], _ = _equal(expected, again)
    except BaseException as exc:  # noqa: BLE001 - the program's failure is the result, whatever it is
        out["literal_equal"] = False
        out["literal_error"] = f"f on the literal arguments raised {_error(exc)}"
    out["literal_input"] = literal
    return out


def _jsonable(value: Any, depth: int = 0) -> JSONValue:
    """The canonical JSON form of a state value (docs/state-family.md): tuples as lists, sets
    as sorted lists, dict keys as ``json`` writes them, finite floats only."""
    kind = type(value)
    if depth > 50:
        raise ValueError("too deep")
    if value is None or kind in (bool, int, str):
        return value
    if kind is float:
        if not math.isfinite(value):
            raise ValueError("not finite")
        return value
    if kind in (list, tuple):
        return [_jsonable(v, depth + 1) for v in value]
    if kind in (set, frozenset):
        return sorted((_jsonable(v, depth + 1) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    if kind is dict:
        out: dict[str, JSONValue] = {}
        for key, v in value.items():
            if type(key) not in (str, int, float, bool) and key is not None:
                raise TypeError("key type")
            name = json.dumps(key) if type(key) is not str else key
            name = name[1:-1] if type(key) is not str and name.startswith('"') else name
            if name in out:
                raise ValueError("keys collide as JSON")
            out[name] = _jsonable(v, depth + 1)
        return out
    raise TypeError(kind.__name__)


def _snapshot(local_vars: dict[str, object]) -> Snapshot:
    """Each local's canonical JSON text (None: not serialisable or over 200 characters)."""
    state: Snapshot = {}
    for name, value in local_vars.items():
        try:
            text = json.dumps(_jsonable(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                              allow_nan=False)
            state[name] = text if len(text) <= MAX_FIELD_CHARS else None
        except BaseException:  # noqa: BLE001 - the program's failure is the result, whatever it is
            state[name] = None
    return state


def _loop_pass(code: str, call: str, loops: list[LoopSpan], target: tuple[int, int] | None) -> LoopPass:
    """Iteration counts of f's loops during the call (first frame of f only); with ``target``
    (loop index, K) also the locals when iteration K's body starts and at the first line
    after the loop once K has started (the state family's inside/post checkpoints)."""
    namespace = _fresh(code)
    function = namespace.get("f")
    fcode = getattr(function, "__code__", None)
    if fcode is None:
        return {"error": "f is not a plain function"}
    first_frame: list[FrameType] = []
    previous: list[int] = []  # the line before the current one
    seen: LoopPass = {"inside": None, "post": None}
    counts = [0] * len(loops)

    def local(frame: FrameType, event: str, arg: object) -> TraceFunction:
        if event == "line":
            line, prev = frame.f_lineno, (previous[-1] if previous else None)
            for index, loop in enumerate(loops):
                if prev == loop["line"] and loop["body"][0] <= line <= loop["body"][1]:
                    counts[index] += 1
                    if target and index == target[0] and counts[index] == target[1]:
                        seen["inside"] = _snapshot(frame.f_locals)
            if target and seen["inside"] is not None and seen["post"] is None:
                loop = loops[target[0]]
                if not loop["line"] <= line <= loop["end"]:
                    seen["post"] = _snapshot(frame.f_locals)
            previous[:] = [line]
        return local

    def start(frame: FrameType, event: str, arg: object) -> TraceFunction | None:
        if event == "call" and frame.f_code is fcode and not first_frame:
            first_frame.append(frame)
            return local
        return None

    sys.settrace(start)
    try:
        _call(namespace, call)
    except BaseException as exc:  # noqa: BLE001 - the program's failure is the result, whatever it is
        return {"error": _error(exc)}
    finally:
        sys.settrace(None)
    return {"iterations": counts, "inside": seen["inside"], "post": seen["post"]}


def _checkpoint(code: str, call: str, loops: list[LoopSpan]) -> Checkpoint:
    counted = _loop_pass(code, call, loops, None)
    if "error" in counted:
        return {"error": counted["error"]}
    eligible = [(n, i) for i, n in enumerate(counted["iterations"]) if n >= 2]
    if not eligible:
        return {"error": "no loop of f iterates at least twice on this input"}
    iterations, index = min(eligible, key=lambda t: (-t[0], loops[t[1]]["line"]))
    k = iterations // 2 + 1
    snap = _loop_pass(code, call, loops, (index, k))
    if "error" in snap:
        return {"error": snap["error"]}
    inside, post = snap["inside"], snap["post"]
    if inside is None or post is None:
        return {"error": f"f does not reach a line after the loop on line {loops[index]['line']} once "
                         f"iteration {k} has run (it returns or raises inside the loop, or the loop ends f)"}
    return {"loop_line": loops[index]["line"], "iterations": iterations, "inside_iteration": k,
            "inside": inside, "post": post}


def _grade(item: GradeItem) -> CallResult:
    from execbench.families.cruxeval.codec import decode

    args = [decode(a) for a in item["args"]]
    kwargs = {name: decode(v) for name, v in item["kwargs"]}
    expected = decode(item["expected"])
    try:
        function: Any = _fresh(item["code"])["f"]
        value = function(*args, **kwargs)
    except BaseException as exc:  # noqa: BLE001 - the program's failure is the result, whatever it is
        return {"status": "error", "error": _error(exc)}
    equal, error = _equal(expected, value)
    return {"status": "ok", "equal": equal, "compare_error": error, "returned": _repr(value)}


def build_job(args: BuildArgs) -> BuildResult:
    """The job runner's handler for a ``build`` item (``args``: ``item``, ``max_line_events``)."""
    sys.setrecursionlimit(3000)
    return _build(args["item"], int(args["max_line_events"]))


def grade_job(args: GradeArgs) -> CallResult:
    """The job runner's handler for a ``grade`` item (``args``: ``item``)."""
    sys.setrecursionlimit(3000)
    return _grade(args["item"])
