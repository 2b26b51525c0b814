"""The interprocedural dynamic backward slice over recorded call records, and the metrics.

See the package docstring (and ``docs/slicing.md``) for the definitions implemented here.
"""

from __future__ import annotations

import ast
import os
from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass, field
from typing import Mapping, Sequence, TypedDict

from execbench.errors import InternalError
from execbench.slicing.analysis import (
    BUILTINS, CONSTRUCTOR_LEAVES, KEYWORDS, AnalysisCache, CodeInfo, Stmt,
)

ASSERT = "assert_vars"
RETURN = "__return__"


class SliceError(InternalError, ValueError):
    """The slice cannot be computed (the assertion line was never executed, its source is
    missing, ...); the message says why."""


# -- the slicer's input and output (JSON; neutral: the families' own types are compatible) --

class CallRecord(TypedDict):
    """The fields of one recorded call the slicer reads (``execbench.tracing``'s call
    record, ``CallJson``, has these and more)."""

    id: int
    parent: int | None  # None: the test function
    func: str  # qualname
    file: str
    firstlineno: int
    depth: int
    call_line: int | None  # the caller's line at call time, when recorded
    lines: list[int]  # executed lines, in order
    exception: str | None  # how the call ended, when it raised


class SliceCriterion(TypedDict):
    """Where the slice starts: the assertion and its masked expression."""

    file: str  # as in the call records (or a suffix of it)
    line: int  # the assertion's first line
    end_line: int | None  # its last line (None: one line)
    expr: str  # the masked expression's source (the answer: not a criterion)


class UntracedCall(TypedDict):
    """An explicit call site of a relevant statement with no call record."""

    caller: int
    file: str
    line: int
    name: str


class SliceResult(TypedDict):
    """What :func:`slice_metrics` returns."""

    esv: int  # executed statements in the slice
    mcl: int  # maximum call length
    dfi: int  # source variables (data-flow inputs)
    relevant_calls: list[int]
    relevant_lines: dict[str, list[int]]  # file -> lines
    source_variables: list[str]
    untraced_calls: list[UntracedCall]
    unanalysed_calls: list[int]
    entry_call: int


@dataclass
class _Frame:
    """Slice state of one processed call record."""

    record: CallRecord
    info: CodeInfo
    relevant: set[int] = field(default_factory=set)  # statement ids
    reads: dict[int, tuple] = field(default_factory=dict)  # stmt id -> reads used


def _norm(path: str) -> str:
    return os.path.normcase(os.path.normpath(path))


def slice_metrics(
    trace_calls: Sequence[CallRecord],
    sources: Mapping[str, str],
    target: SliceCriterion,
    *,
    cache: AnalysisCache | None = None,
) -> SliceResult:
    """Slice the trace backwards from the masked assertion and compute ESV, MCL and DFI.

    ``trace_calls``: call records of one test run (``execbench.tracing`` format);
    ``sources``: file path (as in the records) -> source text; ``target``: ``{"file",
    "line", "expr"}`` and optionally ``"end_line"``, the assertion's file and lines and the source of the masked
    expression (names and calls inside it are not slice criteria: they are the answer).
    Raises :class:`SliceError` when the assertion line was not executed by any record.
    """
    cache = cache or AnalysisCache()
    by_id = {c["id"]: c for c in trace_calls}
    children: dict[int, list[CallRecord]] = {}
    for call in sorted(trace_calls, key=lambda c: c["id"]):
        parent = call.get("parent")
        if parent is not None:
            children.setdefault(parent, []).append(call)
    norm_sources = {_norm(k): v for k, v in sources.items()}

    def source_of(file: str) -> str | None:
        return sources.get(file, norm_sources.get(_norm(file)))

    line = int(target["line"])
    # A multi-line assertion's line events need not include its first line (Python reports the
    # line of the first evaluated sub-expression), so any line of the statement anchors it.
    span = set(range(line, max(line, int(target.get("end_line") or line)) + 1))
    want = _norm(str(target["file"]))
    anchors = [c for c in trace_calls if _norm(c["file"]) == want and not span.isdisjoint(c.get("lines", ()))]
    if not anchors and not os.path.isabs(want):  # a relative path: match it as a suffix
        anchors = [c for c in trace_calls if _norm(c["file"]).endswith(os.sep + want)
                   and not span.isdisjoint(c.get("lines", ()))]
    if not anchors:
        raise SliceError(f"assertion line {line} of {target['file']} was not executed")
    anchor = min(anchors, key=lambda c: (c.get("depth", 0), c["id"]))
    source = source_of(anchor["file"])
    if source is None:
        raise SliceError(f"no source for {anchor['file']}")
    info = cache.code(anchor["file"], source, anchor["func"], anchor["firstlineno"])
    if not info.found or line not in info.line_stmts:
        raise SliceError(f"cannot locate the statement at line {line} in {anchor['func']}")
    assert_stmt = info.line_stmts[line][-1]
    masked = _masked_span(source, info.stmts[assert_stmt], str(target.get("expr") or ""))

    frames: dict[int, _Frame] = {}
    untraced: set[tuple[int, str, int, str]] = set()  # caller, file, line, callee name
    unanalysed: list[int] = []
    seen: set[tuple[int, str]] = set()
    worklist: list[tuple[int, str]] = [(anchor["id"], ASSERT)]
    while worklist:  # LIFO
        call_id, context = worklist.pop()
        if (call_id, context) in seen:
            continue
        seen.add((call_id, context))
        record = by_id[call_id]
        text = source_of(record["file"])
        code = cache.code(record["file"], text, record["func"], record["firstlineno"]) \
            if text is not None else None
        if code is None or not code.found:
            unanalysed.append(call_id)
            continue
        frame = frames.setdefault(call_id, _Frame(record, code))
        occurrences = _occurrences(record, code)
        final = False
        if context == ASSERT:
            criteria = {assert_stmt}
            overrides = {assert_stmt: _outside(code.stmts[assert_stmt].reads, masked)}
        else:
            criteria = _return_criteria(code)
            overrides = {}
            # how a generator or a raising call ended is part of what the caller sees
            final = bool(record.get("exception")) or any(s.yields for s in code.stmts)
        _slice_frame(frame, occurrences, criteria, overrides, final=final)
        kids = children.get(call_id, [])
        attached = _attach(kids, occurrences, code)
        matched: dict[int, set[str]] = {}
        for kid in kids:
            sid, pos = attached.get(kid["id"], (None, None))
            if context == ASSERT and sid == assert_stmt and pos is not None and _inside(pos, masked):
                continue  # the call is part of the masked expression: the answer
            if sid is not None and sid in frame.relevant:
                worklist.append((kid["id"], RETURN))
                matched.setdefault(sid, set()).update(_child_keys(kid["func"]))
        for sid in frame.relevant:
            for site in code.stmts[sid].sites:
                if context == ASSERT and sid == assert_stmt and _inside(site.pos, masked):
                    continue
                if site.name not in matched.get(sid, ()):
                    untraced.add((call_id, record["file"], site.line, site.name))

    return _metrics(frames, untraced, unanalysed, anchor["id"])


# -- within one frame -----------------------------------------------------------------------

def _occurrences(record: CallRecord, code: CodeInfo) -> list[tuple[int, ...]]:
    """The frame's executed lines as statement occurrences (outer to inner statement per
    line; consecutive events inside one statement are one occurrence)."""
    out: list[tuple[int, ...]] = []
    last: tuple[int, ...] | None = None
    for line in record.get("lines", ()):
        stmts = code.line_stmts.get(line)
        if stmts is None:
            last = None
            continue
        if stmts != last:
            out.append(stmts)
        last = stmts
    return out


def _return_criteria(code: CodeInfo) -> set[int]:
    """What a caller observes of a callee: its return/yield values, exceptions raised, and
    in-place changes to its parameters' objects and to declared globals. A class body or
    module frame is observed whole (every statement defines an attribute)."""
    if code.kind in ("class", "module"):
        return {s.id for s in code.stmts}
    out = set()
    for s in code.stmts:
        if s.returns or s.raises or (s.mutates & code.params) or (s.writes & code.declared) \
                or (s.mutates & code.declared):
            out.add(s.id)
    return out


def _slice_frame(frame: _Frame, occurrences: list[tuple[int, ...]], criteria: set[int],
                 overrides: dict[int, tuple], *, final: bool = False) -> None:
    """Dynamic backward slice of one frame at statement granularity.

    Walk the executed statement occurrences backwards keeping the set of needed local
    names and of needed controllers. An occurrence is relevant when its statement is a
    criterion, strongly defines a needed name (which it then kills), modifies the object
    of a needed name in place, or is a needed controller (the most recent occurrence of a
    controlling header), or raised the exception a relevant ``except`` clause caught (the
    occurrence just before the clause's). With ``final`` the last occurrence (where the
    frame ended) is a criterion too. A relevant occurrence adds the local names it reads
    and its controllers."""
    stmts = frame.info.stmts
    needed: set[str] = set()
    ctrl: set[int] = set()
    raiser = final
    for occurrence in reversed(occurrences):
        for sid in reversed(occurrence):
            stmt = stmts[sid]
            relevant = sid in criteria or raiser
            raiser = False
            if stmt.writes & needed:
                relevant = True
                needed -= stmt.writes
            if stmt.mutates & needed:
                relevant = True
            if sid in ctrl:
                relevant = True
                ctrl.discard(sid)
            if relevant:
                reads = overrides.get(sid, stmt.reads)
                frame.relevant.add(sid)
                frame.reads[sid] = reads
                needed.update(r.name for r in reads if r.kind == "local")
                ctrl.update(stmt.controllers)
                raiser = stmt.kind == "ExceptHandler"


# -- attaching child calls to the statements that made them ---------------------------------

def _child_keys(func: str) -> set[str]:
    parts = func.split(".")
    keys = {parts[-1]}
    if parts[-1] in CONSTRUCTOR_LEAVES and len(parts) > 1:
        keys.add(parts[-2])  # Foo(...) runs Foo.__init__
    return keys


def _attach(kids: list[CallRecord], occurrences: list[tuple[int, ...]],
            code: CodeInfo) -> dict[int, tuple[int, tuple[int, int] | None]]:
    """Child call id -> (statement id of the parent that made the call, position of the
    explicit call site it was matched to or None).

    With a ``call_line`` in the child record (the parent's line at call time) this is
    exact. Otherwise children (in call order) are aligned with the parent's executed
    statement occurrences: each child goes to the first occurrence at or after the
    previous child's whose statement has an unused explicit call site of the child's name
    (``f(...)``, ``x.f(...)``, ``F(...)`` for ``F.__init__``) or an implicit call of it (an
    operator dunder, a property); failing that, to the next unused call site whose callee
    is a local value (``binop(...)`` with ``binop`` a parameter); failing that, to the
    current occurrence."""
    out: dict[int, tuple[int, tuple[int, int] | None]] = {}
    stmts = code.stmts
    explicit: dict[str, list[tuple[int, tuple[int, int]]]] = {}
    implicit: dict[str, list[int]] = {}
    dynamic: list[int] = []
    for index, occurrence in enumerate(occurrences):
        keys: set[str] = set()
        for sid in occurrence:
            stmt = stmts[sid]
            for site in sorted(stmt.sites, key=lambda x: x.pos):
                explicit.setdefault(site.name, []).append((index, site.pos))
                if site.dynamic:
                    dynamic.append(index)
            keys |= stmt.implicit
        for key in keys:
            implicit.setdefault(key, []).append(index)
    pointers: Counter[str] = Counter()
    at_line: Counter[tuple[int, frozenset[str]]] = Counter()
    dyn_pointer = 0
    position = 0
    for kid in kids:
        line = kid.get("call_line")
        if isinstance(line, int) and line in code.line_stmts:
            keys = _child_keys(kid["func"])
            sid = _best_at_line(code, line, keys)
            # the explicit call sites of that statement with the callee's name, taken in order
            sites = sorted((x.pos for x in code.stmts[sid].sites if x.name in keys))
            used = at_line[(sid, frozenset(keys))]
            at_line[(sid, frozenset(keys))] += 1
            out[kid["id"]] = (sid, sites[used % len(sites)] if sites else None)
            continue
        if not occurrences:
            continue
        best: tuple[int, int, str] | None = None  # (occurrence, 0 explicit / 1 implicit, key)
        pos: tuple[int, int] | None = None
        for key in _child_keys(kid["func"]):
            entries = explicit.get(key)
            if entries:
                p = pointers[key]
                while p < len(entries) and entries[p][0] < position:
                    p += 1
                pointers[key] = p
                if p < len(entries) and (best is None or (entries[p][0], 0) < best[:2]):
                    best = (entries[p][0], 0, key)
                    pos = entries[p][1]
            implied = implicit.get(key)
            if implied:
                k = bisect_left(implied, position)
                if k < len(implied) and (best is None or (implied[k], 1) < best[:2]):
                    best = (implied[k], 1, key)
                    pos = None
        if best is not None:
            index = best[0]
            if best[1] == 0:
                pointers[best[2]] += 1
        else:
            while dyn_pointer < len(dynamic) and dynamic[dyn_pointer] < position:
                dyn_pointer += 1
            if dyn_pointer < len(dynamic):
                index = dynamic[dyn_pointer]
                dyn_pointer += 1
            else:
                index = position
        position = index
        occurrence = occurrences[index]
        out[kid["id"]] = (_best_in(code, occurrence, _child_keys(kid["func"])), pos)
    return out


def _best_in(code: CodeInfo, stmt_ids: tuple[int, ...], keys: set[str]) -> int:
    for sid in reversed(stmt_ids):
        stmt = code.stmts[sid]
        if keys & ({s.name for s in stmt.sites} | stmt.implicit):
            return sid
    for sid in reversed(stmt_ids):
        if code.stmts[sid].sites:
            return sid
    return stmt_ids[-1]


def _best_at_line(code: CodeInfo, line: int, keys: set[str]) -> int:
    return _best_in(code, code.line_stmts[line], keys)


# -- the masked expression -------------------------------------------------------------------

Span = tuple[int, int, int, int] | None


def _masked_span(source: str, stmt: Stmt, expr: str) -> Span:
    """Absolute (line, col, end_line, end_col) of the masked expression inside the assertion
    statement, or None when it cannot be found (then nothing is excluded)."""
    expr = expr.strip()
    if not expr:
        return None
    try:
        wanted = ast.dump(ast.parse(expr, mode="eval").body)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    lineno, col, end_lineno, end_col = stmt.span
    lines = source.splitlines()[lineno - 1:end_lineno]
    if not lines:
        return None
    if len(lines) == 1:
        lines[0] = lines[0][col:end_col]
    else:
        lines[0] = lines[0][col:]
        lines[-1] = lines[-1][:end_col]
    try:
        tree = ast.parse("\n".join(lines))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    hits = [n for n in ast.walk(tree) if isinstance(n, ast.expr) and ast.dump(n) == wanted]
    if not hits:
        return None
    # prefer an operand of a comparison (``assert x == <mask>``) over other occurrences
    operands = {id(c) for n in ast.walk(tree) if isinstance(n, ast.Compare)
                for c in (n.left, *n.comparators)}
    hit = next((n for n in hits if id(n) in operands), hits[0])

    def absolute(line: int, column: int) -> tuple[int, int]:
        return (line + lineno - 1, column + col if line == 1 else column)

    if hit.end_lineno is None or hit.end_col_offset is None:  # set by ast.parse: never None here
        return None
    start = absolute(hit.lineno, hit.col_offset)
    end = absolute(hit.end_lineno, hit.end_col_offset)
    return (*start, *end)


def _inside(pos: tuple[int, int], span: Span) -> bool:
    if span is None:
        return False
    return (span[0], span[1]) <= pos < (span[2], span[3])


def _outside(reads: tuple, span: Span) -> tuple:
    return tuple(r for r in reads if not _inside(r.pos, span))


# -- metrics ----------------------------------------------------------------------------------

def _metrics(frames: dict[int, _Frame], untraced: set[tuple[int, str, int, str]], unanalysed: list[int],
             entry: int) -> SliceResult:
    esv_lines: set[tuple[str, int]] = set()
    relevant_lines: dict[str, set[int]] = {}
    mcl = 0
    sources: set[str] = set()
    for frame in frames.values():
        info, record = frame.info, frame.record
        esv_lines.update((info.file, line) for line in info.code_lines)
        counts = Counter(record.get("lines", ()))
        for line, n in counts.items():
            if any(sid in frame.relevant for sid in info.line_stmts.get(line, ())):
                mcl += n
                relevant_lines.setdefault(record["file"], set()).add(line)
        sources |= _source_variables(frame)
    relevant_calls = sorted(set(frames) | set(unanalysed))
    return {
        "esv": len(esv_lines),
        "mcl": mcl,
        "dfi": len(sources),
        "relevant_calls": relevant_calls,
        "relevant_lines": {f: sorted(v) for f, v in sorted(relevant_lines.items())},
        "source_variables": sorted(sources),
        "untraced_calls": [
            {"caller": c, "file": f, "line": ln, "name": n} for c, f, ln, n in sorted(untraced)
        ],
        "unanalysed_calls": sorted(unanalysed),
        "entry_call": entry,
    }


def _source_variables(frame: _Frame) -> set[str]:
    """Names read but never (re)defined by the frame's relevant statements, minus builtins,
    keywords, module imports (``import x``, and any import inside the code) and the names
    the relevant statements call."""
    info = frame.info
    read: dict[str, str] = {}
    written: set[str] = set()
    callees: set[str] = set()
    for sid in frame.relevant:
        stmt = info.stmts[sid]
        for r in frame.reads.get(sid, stmt.reads):
            if r.kind != "nested":
                read.setdefault(r.name, r.kind)
        written |= stmt.writes
        callees |= stmt.callees
    out = set()
    for name, kind in read.items():
        if name in written or name in callees or name in KEYWORDS:
            continue
        if kind == "builtin" or (kind != "local" and name in BUILTINS):
            continue
        if kind != "local" and (name in info.module_imports or name in info.imported):
            continue
        out.add(name)
    return out
