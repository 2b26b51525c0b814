"""Typed records of a state build (issue 25).

A candidate's payload stays a JSON object (it is hashed into the build-cache key and
crosses process boundaries): :class:`StatePayload` and :class:`SourceErrorPayload` are
``TypedDict``\\ s, as the checkpoint record (:class:`Checkpoint`) and the automatic choice's
record (:class:`AutoChoice`) that go into every task's provenance. The in-process records
of one case's build are dataclasses: the build settings parsed once from the options
(:class:`Settings`), the checkpoint the case is built with (:class:`Choice`) and what its
runs gave (:class:`CaseResult`).

Key order never matters for the bytes written: task records, rejections and cache entries
are serialised with sorted keys (``dataset/manifest.py``, ``dataset/cache.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generator, Literal, NotRequired, TypedDict

from execbench.contract import hashseeds
from execbench.contract.jsontypes import JSONObject, JSONValue
from execbench.sandbox.jobs import Job, JobResult

# A case is built by a generator (build.py): it yields the jobs of one step by hash seed,
# receives their results by hash seed and job id, and returns what it built.
Step = dict[int, list[Job]]
Results = dict[int, dict[str, JobResult]]

ARMS = ("short-trace-final", "long-trace-final", "inside-loop-state", "post-loop-state")


# -- the candidate payload (JSON) -----------------------------------------------------------

class Checkpoint(TypedDict):
    """A declared checkpoint (a case's ``[checkpoint]``, networkx-simplex's pivot loop, a mutant's)."""

    loop_line: int
    fields: list[str]
    inside_iteration: int | None  # None: the middle iteration of the long run, counted
    core: list[str]  # the fields of which one must change between the inside and post checkpoints


class Band(TypedDict):
    """networkx-simplex: the pivot-count band a case was selected in."""

    name: str
    pivots: int  # the count at selection
    range: list[int]  # [lo, hi)


class CaseProvenance(TypedDict, total=False):
    """Source facts copied into every task's provenance."""

    pair: str  # the program's name in the paired corpus
    license: str  # case.toml's `license` (the dataset card's license of the source)
    networkx: str
    generator: str
    candidate_index: int
    band: str
    selection_pivots: int


class StatePayload(TypedDict):
    """A state candidate's payload: one case."""

    source: str
    case: str
    language: Literal["python", "cpp"]
    program: str
    short: str  # the short input (stdin)
    long: str
    checkpoint: Checkpoint | None  # None: chosen automatically
    topic: str | None
    compare: str  # final arms: "tokens" | "bytes"
    source_id: str
    files: NotRequired[dict[str, str]]  # case directory: role -> file name
    toolchain: NotRequired[str]  # C++: the compiler's version line ("" when there is none)
    provenance: NotRequired[CaseProvenance]
    preload: NotRequired[list[str]]  # modules the sandbox imports before the program (networkx)
    networkx: NotRequired[str]
    band: NotRequired[Band]


class SourceErrorPayload(TypedDict):
    """A case directory that could not be read: rejected at stage ``source``."""

    error: str
    case: str


# -- the checkpoint choice ------------------------------------------------------------------

class RankedLoop(TypedDict):
    loop_line: int
    iterations: int


class TriedLoop(TypedDict):
    loop_line: int
    iterations: int
    result: str  # "chosen" or why no projection qualified


class AutoChoice(TypedDict):
    """How an automatic choice was made (provenance ``checkpoint.auto``)."""

    ranking: list[RankedLoop]
    tried: list[TriedLoop]
    rule: str


class CheckpointRecord(TypedDict, total=False):
    """The checkpoint as a task's provenance records it (absent values left out)."""

    loop_line: int
    fields: list[str]
    inside_iteration: int
    core: list[str]
    loop_iterations: int
    chosen_by: str
    auto: AutoChoice


@dataclass
class Choice:
    """The checkpoint a case is built with: declared (``chosen_by="case"``) or chosen by the
    rule of :mod:`.choose` (``"auto"``)."""

    chosen_by: str
    loop_line: int
    fields: list[str]
    inside_iteration: int
    core: list[str]
    loop_iterations: int | None = None  # counted on the long input (absent: declared iteration)
    auto: AutoChoice | None = None

    def record(self) -> CheckpointRecord:
        record: CheckpointRecord = {"loop_line": self.loop_line, "fields": self.fields,
                                    "inside_iteration": self.inside_iteration, "core": self.core,
                                    "chosen_by": self.chosen_by}
        if self.loop_iterations is not None:
            record["loop_iterations"] = self.loop_iterations
        if self.auto is not None:
            record["auto"] = self.auto
        return record


# -- a case's result ------------------------------------------------------------------------

class ArmMetrics(TypedDict):
    """The measured metrics of one arm (state metrics None when the C++ meter could not measure)."""

    trace_length: int
    line_events: int | None
    peak_state: int | None
    state_load: int | None
    state_stride: int | None


@dataclass(frozen=True)
class CaseResult:
    """What a case's runs gave, checked (build.py ``_finish``)."""

    short_output: str
    long_output: str
    inside_state: JSONObject
    post_state: JSONObject
    inside_line: str  # the canonical state lines as printed
    post_line: str
    inside_program: str  # the instrumented programs
    post_program: str
    choice: Choice
    trace: dict[str, list[int]]  # "short"/"long" -> the trace length of every repeat
    metrics: dict[str, ArmMetrics]  # by arm
    unit: str  # the trace length's unit: "opcodes" | "gcov line executions"
    meter_error: str | None = None  # C++: why the state metrics are null


CaseRun = Generator[Step, Results, CaseResult]


# -- the task record (dataset/record.py's fields, with the state family's metrics and provenance) --

class StateMetrics(ArmMetrics):
    cyclomatic: int  # of the clean program
    cyclomatic_max: int
    cyclomatic_shown: int  # of the program shown (instrumented for the state arms)
    loc: int
    input_bytes: int
    answer_chars: int
    answer_leaves: int | None  # state arms: leaves of the state object
    loop_iterations: int | None
    inside_iteration: int


class CommonProvenance(CaseProvenance):
    """The provenance every arm of a case shares."""

    case_source: str
    case: str
    topic: str | None
    program_sha256: str
    short_input_sha256: str
    long_input_sha256: str
    checkpoint: CheckpointRecord
    trace_unit: str
    trace_lengths: dict[str, list[int]]
    repeats: int
    key_hash_seed: int | None  # Python: the key run's PYTHONHASHSEED (0); C++: None
    instrumentation_version: str
    toolchain: NotRequired[str]  # C++
    compile: NotRequired[str]  # C++: the compile command
    state_meter: NotRequired[str]  # C++: why the state metrics are null


class StateProvenance(CommonProvenance):
    compare: str  # "tokens" | "bytes" | "json-structural"
    shown_sha256: str
    state_line: NotRequired[str]  # state arms: the state as the program printed it


class PromptFields(TypedDict):
    program: str
    input: str
    language: str


class StateTask(TypedDict):
    """One task record of the state family (``tasks.jsonl``)."""

    id: str
    family: str
    arm: str
    source_id: str
    language: str
    prompt_fields: PromptFields
    answer: str | JSONObject  # final arms: the output text; state arms: the state object
    answer_kind: str  # "text" | "json"
    metrics: StateMetrics
    provenance: StateProvenance


# -- the Python job's records (jobs.py, _runner.py; JSON across the sandbox) ----------------

class Measure(TypedDict):
    """What a measured Python run measures (``python_job``'s ``measure``)."""

    state: bool  # run the state meter too
    max_line_events: int  # the tracer stops the program past this many line events
    state_budget: int  # the state meter's work budget before it doubles its stride


class PythonJobArgs(TypedDict):
    """The arguments of the Python job (``_runner.run_program``)."""

    program: str  # file name in the job's directory
    measure: NotRequired[Measure]
    dump_global: NotRequired[str]  # the global whose value the job returns
    instrumented: NotRequired[Instrumented]  # run this text as the program (the file is the clean one)


class Instrumented(TypedDict):
    """An instrumented program run under the clean program's line numbers and file name."""

    text: str
    lines: list[int]  # the line each of its lines runs under (instrument_py.executed_lines)


class ExecJobArgs(TypedDict):
    """The arguments of an ``exec`` job (``jobs.exec_job``)."""

    argv: list[str]
    env: NotRequired[dict[str, str]]


class RunMetrics(TypedDict, total=False):
    """A measured run's metrics: the tracer's counts, and the state meter's when it ran
    (checked field by field by ``jobs.checked``: the program could have written them)."""

    status: str  # "ok", "too_large" or "tampered"
    opcodes: int
    line_events: int
    too_large: str  # which limit stopped the run
    peak_state: int
    state_load: int
    state_stride: int
    state_samples: int
    state_work: int


class RunRecord(TypedDict, total=False):
    """What ``_runner.run_program`` returns (keys only when measured / asked for)."""

    metrics: RunMetrics
    dump: JSONValue  # the dumped global (plain JSON)
    dump_error: str  # why it could not be dumped


class CheckedRun(TypedDict):
    """A successful Python job's record after ``jobs.checked`` (``JobResult.value``)."""

    metrics: RunMetrics  # {} when the run was not measured
    dump: JSONValue
    dump_error: str | None


# -- build settings -------------------------------------------------------------------------

class RunLimits(TypedDict):
    """A native run's caps (keyword arguments of the state family's job constructors)."""

    cpu: float
    wall: float
    memory_mb: int
    max_output: int


class StateOptions(TypedDict):
    """The build options as the build engine hands them over: ``build.DEFAULT_OPTIONS``, with
    ``--set`` overrides (each keeps its default's type, ``contract.options.parse_settings``) and the
    build's hash seeds."""

    repeats: int
    check_seeds: str
    min_trace_ratio: float
    time_limit: float
    memory_mb: int
    trace_time_limit: float
    max_line_events: int
    state_budget: int
    max_output_bytes: int
    max_fields: int
    max_field_chars: int
    final_compare: str
    cpp_std: str
    compile_time_limit: float
    hash_seeds: NotRequired[list[int]]  # contract/hashseeds.py resolve()
    hash_seeds_extra: NotRequired[list[int]]  # contract/hashseeds.py resolve(): the extra check runs' seeds


@dataclass(frozen=True)
class Settings:
    """The state family's build options (``build.DEFAULT_OPTIONS`` overridden by ``--set``),
    read once per batch."""

    repeats: int
    check_seeds: str
    hash_seeds: tuple[int, ...] | None  # set by the build engine (contract/hashseeds.py resolve)
    min_trace_ratio: float
    time_limit: float
    memory_mb: int
    trace_time_limit: float
    max_line_events: int
    state_budget: int
    max_output_bytes: int
    max_fields: int
    max_field_chars: int
    final_compare: str
    cpp_std: str
    compile_time_limit: float
    extra_seeds: tuple[int, ...] | None = None  # hashseeds.resolve's extra check seeds (issue 33)

    @classmethod
    def of(cls, options: StateOptions) -> Settings:
        """The settings of ``options`` (numbers coerced: a manifest's JSON may give 10 for 10.0)."""
        resolved = options.get("hash_seeds")
        return cls(repeats=int(options["repeats"]), check_seeds=str(options.get("check_seeds") or ""),
                   hash_seeds=tuple(int(s) for s in resolved) if resolved else None,
                   min_trace_ratio=float(options["min_trace_ratio"]), time_limit=float(options["time_limit"]),
                   memory_mb=int(options["memory_mb"]), trace_time_limit=float(options["trace_time_limit"]),
                   max_line_events=int(options["max_line_events"]), state_budget=int(options["state_budget"]),
                   max_output_bytes=int(options["max_output_bytes"]), max_fields=int(options["max_fields"]),
                   max_field_chars=int(options["max_field_chars"]), final_compare=str(options["final_compare"]),
                   cpp_std=str(options["cpp_std"]), compile_time_limit=float(options["compile_time_limit"]),
                   extra_seeds=tuple(int(s) for s in options.get("hash_seeds_extra") or ()) or None)

    def check_runs(self) -> list[int]:
        """The check runs' hash seeds (the key run's is 0): :func:`hashseeds.of` of the options
        (SourceError for a bad pin)."""
        return hashseeds.of({"repeats": self.repeats, hashseeds.OPTION: self.check_seeds,
                             hashseeds.RESOLVED: list(self.hash_seeds or ())})[1:]

    def extra_runs(self) -> list[int]:
        """The hash seeds of a hash-order suspect's extra check runs (:func:`hashseeds.extra`)."""
        options: dict[str, Any] = {"repeats": self.repeats, hashseeds.OPTION: self.check_seeds}
        if self.hash_seeds:
            options[hashseeds.RESOLVED] = list(self.hash_seeds)
            options[hashseeds.EXTRA] = list(self.extra_seeds or ())
        return hashseeds.extra(options)

    def native_limits(self) -> RunLimits:
        t = self.time_limit
        return {"cpu": t, "wall": 2 * t + 5, "memory_mb": self.memory_mb, "max_output": self.max_output_bytes}

    def traced_limits(self) -> RunLimits:
        """A run under the tracer or the C++ state meter."""
        t = self.trace_time_limit
        return {"cpu": t, "wall": 2 * t + 5, "memory_mb": max(2048, self.memory_mb), "max_output": self.max_output_bytes}

    def profile_limits(self) -> RunLimits:
        """A profiling or snapshot run (the automatic choice's)."""
        t = self.time_limit
        return {"cpu": 2 * t, "wall": 4 * t + 5, "memory_mb": self.memory_mb, "max_output": self.max_output_bytes}
