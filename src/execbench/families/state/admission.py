"""Admission of a case's runs: every output decoded, deterministic across the hash seeds, the
states well formed, the trace order kept.

The checks both languages' builds run on their jobs' results (rejection stages ``execution``,
``caps``, ``determinism``, ``checkpoint``, ``trace-order``; :mod:`.build`'s docstring).
:func:`_finish` turns the runs of one case into its :class:`CaseResult`. Split out of :mod:`.build`.
"""

from __future__ import annotations

import json

from execbench.contract import Reject
from execbench.contract.jsontypes import JSONObject
from execbench.families.state.canonical import depth_ok, dumps, json_type
from execbench.families.state.records import ArmMetrics, CaseResult, Choice, Settings
from execbench.sandbox.classify import STDERR_TAIL
from execbench.sandbox.jobs import JobResult


def _need(job: JobResult | None, what: str, *, stage: str = "execution") -> JobResult:
    if job is None:
        raise Reject(stage, f"{what}: the run did not happen")
    if job.limit is not None:
        raise Reject("caps", f"{what}: {job.reason()}", wall=job.wall, cpu=job.cpu, maxrss_kb=job.maxrss_kb)
    if not job.ok:
        raise Reject(stage, f"{what}: {job.reason()}")
    return job


def _decode(job: JobResult, what: str) -> str:
    try:
        return job.stdout.decode("utf-8")
    except UnicodeDecodeError:
        raise Reject("execution", f"{what}: output is not UTF-8") from None


def _same(values: list[str], what: str) -> str:
    if any(v != values[0] for v in values[1:]):
        raise Reject("determinism", f"{what} differs across {len(values)} runs")
    return values[0]


def _state_from(text: str, clean: str, what: str) -> tuple[JSONObject, str]:
    """(state object, canonical line) from an instrumented run's stdout, checking that the
    output before the state line is a prefix of the clean program's output."""
    if not text.endswith("\n"):
        raise Reject("checkpoint", f"{what}: the checkpoint did not fire (no state line at the end of the output)")
    body = text[:-1]
    cut = body.rfind("\n")
    prefix, line = (body[: cut + 1], body[cut + 1:]) if cut >= 0 else ("", body)
    if not clean.startswith(prefix):
        raise Reject("checkpoint", f"{what}: output before the checkpoint is not a prefix of the clean output")
    if not line.startswith("{") or not depth_ok(line):
        raise Reject("checkpoint", f"{what}: the checkpoint did not fire (last line is not a state object)")
    try:
        value = json.loads(line)
    except ValueError:
        raise Reject("checkpoint", f"{what}: the state line is not JSON") from None
    if not isinstance(value, dict):
        raise Reject("checkpoint", f"{what}: the state is not an object")
    return value, line


def _check_stderr(arm: list[JobResult], clean: JobResult, what: str) -> None:
    """Beyond stdout: what an instrumented run wrote to stderr up to its checkpoint must be a
    prefix of what the clean long run wrote (warnings, tracebacks it printed, with the clean
    line numbers); compared when neither was cut to its tail."""
    whole = [job.stderr for job in [*arm, clean] if len(job.stderr.encode()) < STDERR_TAIL]
    if len(whole) == len(arm) + 1 and not all(clean.stderr.startswith(text) for text in whole[:-1]):
        raise Reject("checkpoint", f"{what}: error output before the checkpoint is not a prefix of the clean run's")


def _check_states(inside: JSONObject, post: JSONObject, fields: list[str], core: list[str]) -> None:
    if set(inside) != set(fields) or set(post) != set(fields):
        raise Reject("checkpoint", "the states do not hold exactly the projected fields")
    for name in fields:
        if json_type(inside[name]) != json_type(post[name]):
            raise Reject("checkpoint", f"field {name!r} changes type between checkpoints "
                                       f"({json_type(inside[name])} -> {json_type(post[name])})")
    if all(dumps(inside[name]) == dumps(post[name]) for name in core):
        raise Reject("checkpoint", "no core field changes between the inside and post checkpoints")


def _check_order(short: list[int], long: list[int], ratio: float, unit: str) -> None:
    if not short or not long:
        raise Reject("trace-order", "trace lengths were not measured")
    if not all(ratio * s < l_ for s in short for l_ in long):
        raise Reject("trace-order", f"not short << long: {unit} short {short}, long {long} "
                                    f"(need long > {ratio:g} x short in every measurement)")


def _finish(runs: dict[str, list[JobResult]], choice: Choice, core: list[str], inside_src: str,
            post_src: str, trace: dict[str, list[int]], metrics: dict[str, ArmMetrics], unit: str,
            settings: Settings) -> CaseResult:
    short_out = _same([_decode(j, "short run") for j in runs["short"]], "short output")
    long_out = _same([_decode(j, "long run") for j in runs["long"]], "long output")
    inside_text = _same([_decode(j, "inside run") for j in runs["inside"]], "inside-checkpoint output")
    post_text = _same([_decode(j, "post run") for j in runs["post"]], "post-checkpoint output")
    inside, inside_line = _state_from(inside_text, long_out, "inside checkpoint")
    post, post_line = _state_from(post_text, long_out, "post checkpoint")
    for label in ("inside", "post"):
        _check_stderr(runs[label], runs["long"][0], f"{label} checkpoint")
    _check_states(inside, post, choice.fields, core)
    _check_order(trace["short"], trace["long"], settings.min_trace_ratio, unit)
    return CaseResult(short_output=short_out, long_output=long_out, inside_state=inside, post_state=post,
                      inside_line=inside_line, post_line=post_line, inside_program=inside_src,
                      post_program=post_src, choice=choice, trace=trace, metrics=metrics, unit=unit)
