"""The CoCoNUT paper's Advanced-Trace programs as a source: ``execbench build trace coconut-advanced:PATH``.

``PATH`` is a local clone (a work tree) of the authors' repository
(github:seal-research/structural-code-understanding-dataset). It has no license file, so
nothing of it ships with execbench: this module reads the clone at build time, and the
built dataset's card says the programs carry no license.

Rows and programs
    Row ``i`` of ``Dataset/Advanced/Trace/program_traces_Python_<Category>_Lines.csv``
    (Recursion: the ``... - Kopie.csv`` or the ``... - Kopie.zip`` holding it, when the CSV
    itself is absent, as in the fetched snapshot) is the trace of
    ``Dataset/Advanced/Test/<Category>_prepared/Python/<Filename>_trace_<i % 5 + 1>.py`` run
    as a script: the authors' own rule (``complex_tracing.add_code_indices``). Every row's
    ``Code_Indices`` must equal :func:`code_indices` of that file, which checks the mapping;
    a row whose file is missing or differs is rejected at stage ``source``. One row is one
    candidate (``coconut-advanced/<topic>/<file stem>``), run once per hash seed with an
    empty standard input; topics: ``recursion``, ``oop``, ``concurrency``.

Line numbers are the paper's
    The authors' tracer ran each file with ``exec`` in its own module's globals, which had
    imported ``Lock``, ``Thread``, ``List``, ``deque``, ``sleep``, ... (see their
    ``Concurrency_Tracer.py``), and some programs use those names without importing them.
    Such a program runs with one prelude line of imports above it (:func:`prelude`; only
    the names it uses and never binds), and the payload's ``line_offset`` (1) makes the
    build subtract it again: answers are numbered as the published file, as the paper's
    traces are. The prelude line's own event (a script without a main guard) is dropped.
    The runner also captured standard output in a ``StringIO``; programs that read it back
    (``sys.stdout.getvalue()``) get that capture in the same line.

What the model is shown
    ``layout=execbench``: the file as published (``#START`` / ``#END`` markers included).
    ``layout=coconut``: the paper's listing, every line cut at its first ``#`` (so the
    markers and comments go, as in ``Code_Indices``), indentation kept so the text still
    reads as Python; ``--variant coconut`` renders it exactly as ``Code_Indices``
    (:func:`code_indices`: stripped, `` # N``). Both layouts have the same answers.
"""

from __future__ import annotations

import ast
import builtins
import csv
import io
import json
import sys
import warnings
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from execbench.contract import Candidate, SourceError

PREFIX = "coconut-advanced:"
SOURCE = "coconut-advanced"
CATEGORIES = {"Recursion": "recursion", "OOP": "oop", "Concurrency": "concurrency"}
TRACE_CSV = "Dataset/Advanced/Trace/program_traces_Python_{category}_Lines"
PROGRAM = "Dataset/Advanced/Test/{category}_prepared/Python/{filename}_trace_{k}.py"
MAX_CSV_BYTES = 200_000_000  # the largest published trace CSV is ~30 MB
# Names the paper's programs use without importing them, and the module that provides each
# (the authors' runner had imported them; a prelude line of ours does the same).
PROVIDERS = {
    "threading": {"Thread", "Lock", "RLock", "Semaphore", "BoundedSemaphore", "Condition", "Event", "Barrier",
                  "Timer", "current_thread", "active_count"},
    "typing": {"List", "Optional", "Callable", "Dict", "Tuple", "Set", "Any", "Union", "Deque"},
    "collections": {"deque", "defaultdict", "Counter", "OrderedDict", "namedtuple"},
    "time": {"sleep"},
    "queue": {"Queue"},
    "concurrent.futures": {"ThreadPoolExecutor"},
    "functools": {"lru_cache", "cache", "reduce"},
    "math": {"sqrt", "inf", "floor", "ceil"},
    "abc": {"ABC", "abstractmethod"},
    "urllib.parse": {"urlparse", "urljoin"},
}
MODULES = {"collections", "threading", "time", "math", "random", "heapq", "itertools", "functools", "queue",
           "sys", "os", "bisect", "string", "re", "copy", "asyncio", "operator", "typing", "io"}
PACKAGES = {"concurrent": "concurrent.futures"}  # a package used through its submodule
CAPTURE = "_coconut_io"  # the stdout capture's own names: they shadow none of the program's


@dataclass(frozen=True)
class Row:
    """One published trace: the row of its category's CSV and the program file it traced."""

    topic: str
    index: int  # row number in the category's CSV
    path: str  # the program, relative to the clone
    executed: str  # the published ExecutedLines text
    code_indices: str  # the published listing

    @property
    def case(self) -> str:
        return f"{self.topic}/{Path(self.path).stem}"


def split_source(source: str) -> tuple[Path, str | None]:
    """``coconut-advanced:PATH[:topic,...]`` → (clone, topics or None). A trailing
    ``:recursion,oop`` keeps those topics only."""
    rest = source[len(PREFIX):]
    head, sep, tail = rest.rpartition(":")
    if sep and tail and all(t in CATEGORIES.values() for t in tail.split(",")):
        return Path(head), tail
    return Path(rest), None


def read_csv(repo: Path, category: str) -> list[dict[str, str]]:
    """The category's published rows (the CSV, or the copy the repository keeps zipped)."""
    base = repo / TRACE_CSV.format(category=category)
    raw: bytes | None = None
    for candidate in (base.with_name(base.name + ".csv"), base.with_name(base.name + " - Kopie.csv")):
        if candidate.is_file():
            raw = candidate.read_bytes()[:MAX_CSV_BYTES]
            break
    packed = base.with_name(base.name + " - Kopie.zip")
    if raw is None and packed.is_file():
        with zipfile.ZipFile(packed) as archive:
            names = [n for n in archive.namelist() if n.endswith(".csv")]
            if names and archive.getinfo(names[0]).file_size <= MAX_CSV_BYTES:
                raw = archive.read(names[0])
    if raw is None:
        raise SourceError(f"{base}.csv (or its ' - Kopie' copy) is not in {repo}: is it a clone of "
                          f"seal-research/structural-code-understanding-dataset?")
    csv.field_size_limit(sys.maxsize)
    return list(csv.DictReader(io.StringIO(raw.decode("utf-8"), newline="")))


def rows(repo: Path, topics: set[str] | None = None) -> Iterator[Row]:
    for category, topic in CATEGORIES.items():
        if topics is not None and topic not in topics:
            continue
        for index, row in enumerate(read_csv(repo, category)):
            path = PROGRAM.format(category=category, filename=row["Filename"], k=index % 5 + 1)
            yield Row(topic, index, path, row.get("ExecutedLines", ""), row.get("Code_Indices", ""))


def _lines(program: str) -> list[str]:
    return io.StringIO(program).readlines()  # as the authors' file.readlines(): "\n" only


def code_indices(program: str) -> str:
    """The paper's listing of an advanced program (``complex_tracing.add_code_indices``):
    each line cut at its first ``#``, stripped, suffixed `` # N``; an empty one is ``# N``."""
    out = []
    for number, line in enumerate(_lines(program), 1):
        code = line.split("#")[0].strip()
        out.append(f"{code} # {number}" if code else f"# {number}")
    return "\n".join(out)


def listing(program: str) -> str:
    """What ``layout=coconut`` shows: the lines of :func:`code_indices`, indentation kept."""
    return "\n".join(line.split("#")[0].rstrip() for line in _lines(program))


def undefined_names(source: str) -> set[str]:
    """Names loaded somewhere but bound nowhere in the program (nor builtins)."""
    with warnings.catch_warnings():  # the published programs hold invalid escapes ("\d"): not ours to report
        warnings.simplefilter("ignore", SyntaxWarning)
        tree = ast.parse(source)
    loaded: set[str] = set()
    bound = set(dir(builtins))
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update(node.names)
    return loaded - bound


def prelude(source: str) -> str | None:
    """One line importing what the paper's runner provided and the program uses unbound; a
    program that reads back its own standard output (``sys.stdout`` and ``.getvalue()``)
    also gets the runner's capture, ``sys.stdout = io.StringIO()``."""
    missing = undefined_names(source)
    parts = [f"from {module} import {', '.join(sorted(names & missing))}"
             for module, names in PROVIDERS.items() if names & missing]
    modules = sorted(missing & MODULES) + sorted(PACKAGES[name] for name in missing & set(PACKAGES))
    if modules:
        parts.append("import " + ", ".join(modules))
    if "sys.stdout" in source and ".getvalue()" in source:
        parts.append(f"import io as {CAPTURE}, sys as {CAPTURE}_sys; {CAPTURE}_sys.stdout = {CAPTURE}.StringIO()")
    return "; ".join(parts) if parts else None


def published_trace(text: str) -> list:
    """A published ``ExecutedLines`` as an answer: ints, ``'('`` … ``')'`` as a nested list
    in the published order (an unclosed segment runs to the end)."""
    out: list = []
    stack = [out]
    for item in json.loads(text.replace("'", '"')):
        if item == "(":
            segment: list = []
            stack[-1].append(segment)
            stack.append(segment)
        elif item == ")":
            if len(stack) > 1:
                stack.pop()
        else:
            stack[-1].append(int(item))
    return out


def candidates(source: str, layout: str) -> Iterator[Candidate]:
    """One candidate per published row (module doc); problems are ``source_error`` payloads,
    which the build rejects at stage ``source``."""
    repo, topics = split_source(source)
    if not repo.is_dir():
        raise SourceError(f"{source!r}: {repo} is not a directory (a clone of the CoCoNUT repository)")
    for row in rows(repo, set(topics.split(",")) if topics else None):
        payload: dict = {"source": SOURCE, "case": row.case, "mode": "script", "runs": [""], "topic": row.topic,
                         "paper_row": row.index}
        file = repo / row.path
        try:
            text = file.read_text(encoding="utf-8")
            extra = prelude(text)
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError) as exc:
            payload.update(program="", source_error=f"{row.path}: {type(exc).__name__}: {exc}")
            yield Candidate(key=f"{SOURCE}/{row.case}", payload=payload)
            continue
        if code_indices(text) != row.code_indices:
            payload["source_error"] = f"{row.path} is not the program row {row.index}'s Code_Indices shows"
        payload["program"] = f"{extra}\n{text}" if extra else text
        payload["line_offset"] = 1 if extra else 0
        payload["listing"] = listing(text) if layout == "coconut" else text
        yield Candidate(key=f"{SOURCE}/{row.case}", payload=payload)


def shift_lines(trace: list, offset: int) -> list:
    """``trace`` numbered as the program without its ``offset`` prelude lines (their own
    events dropped)."""
    if not offset:
        return trace
    out: list = []
    for item in trace:
        if isinstance(item, list):
            out.append(shift_lines(item, offset))
        elif item > offset:
            out.append(item - offset)
    return out
