"""Precompiled standard headers for the state family's g++ compiles (issue 27: build time).

Most of an ``-O0`` compile of a corpus program is parsing the standard headers it and the
inserted instrumentation include. :func:`use` rewrites a step's g++ compiles to
``-include <dir>/pch.h`` (``-Winvalid-pch``), where ``pch.h`` includes exactly the standard
headers the compiled source includes **before anything else** (:func:`leading_headers`:
blank lines, ``//`` comments, ``#include <name>`` of a standard header, ``#line`` directives
(the instrumented copies': they renumber the lines that follow, not a standard header's) and
the instrumentation's own ``#define EXECBENCH_...`` lines; the scan stops at any other line).
The source itself is unchanged, so its line numbers (gcov's counts) are too, and the
translation unit means the same: those headers come first in it anyway, and a standard
header included again, or in another order, has no effect different from being included
once ([using.headers]). If g++ cannot use the ``.gch`` it reads ``pch.h`` as text: slower,
same program.

A ``.gch`` is compiled IN THE SANDBOX like every compiler run (the compiler is code under
test), with the compile's own flags (g++ uses a ``.gch`` only when they match), once per
process per (toolchain, flags, headers), once :data:`MIN_USES` compiles of this process
have needed it (counting the step's); it is stored read-only in a directory of this
process under the temp dir (removed at exit) that the step's sandbox may read. A ``.gch``
that fails to build is not retried (those compiles read the headers as text, as before).
"""

from __future__ import annotations

import atexit
import hashlib
import os
import re
import shutil
import tempfile
import threading
from dataclasses import replace
from typing import Sequence

from execbench.sandbox.jobs import Job, run_jobs

MIN_USES = 3    # a .gch costs about as much as 2-3 compiles of its headers; each use saves most of one
MAX_PCH = 256 << 20   # the biggest (every header the emitter and the meter include) is ~55 MB
PCH_NAME = "pch.h"
Key = tuple[str, tuple[str, ...], tuple[str, ...]]   # (toolchain, g++ flags, headers)

# C++17 standard library headers (C++ and <cname> forms): all have include guards
STANDARD = frozenset("""
algorithm any array atomic bitset cassert cctype cerrno cfenv cfloat charconv chrono cinttypes climits
clocale cmath codecvt complex condition_variable csetjmp csignal cstdarg cstddef cstdint cstdio cstdlib
cstring ctime cuchar cwchar cwctype deque exception execution filesystem forward_list fstream functional
future initializer_list iomanip ios iosfwd iostream istream iterator limits list locale map memory
memory_resource mutex new numeric optional ostream queue random ratio regex scoped_allocator set
shared_mutex sstream stack stdexcept streambuf string string_view system_error thread tuple type_traits
typeindex typeinfo unordered_map unordered_set utility valarray variant vector
""".split())

_INCLUDE = re.compile(r"[ \t]*#[ \t]*include[ \t]*<([a-z_]+)>[ \t]*(//.*)?")
_SKIP = re.compile(r"[ \t]*(//.*)?|[ \t]*#[ \t]*define[ \t]+EXECBENCH_[A-Z_]+\b.*"
                   r'|[ \t]*#[ \t]*line[ \t]+\d+([ \t]+"[^"\n]*")?[ \t]*')


def leading_headers(source: str) -> tuple[str, ...]:
    """The standard headers ``source`` includes before any other line (sorted, once each)."""
    found: set[str] = set()
    for line in source.split("\n"):
        match = _INCLUDE.fullmatch(line)
        if match and match.group(1) in STANDARD:
            found.add(match.group(1))
        elif not _SKIP.fullmatch(line):
            break
    return tuple(sorted(found))


def _compile_of(job: Job) -> tuple[tuple[str, ...], str] | None:
    """(flags, source) of a state compile job (``g++ FLAGS -o prog main.cpp``), else None."""
    argv = job.args.get("argv") if job.handler == "exec" else None
    if not isinstance(argv, list) or argv[:1] != ["g++"] or argv[-3:] != ["-o", "prog", "main.cpp"]:
        return None
    source = job.files.get(f"{job.cwd}/main.cpp" if job.cwd != "." else "main.cpp")
    return (tuple(argv[1:-3]), source) if isinstance(source, str) else None


class _Store:
    """This process's precompiled headers: key → directory holding pch.h and pch.h.gch (None:
    the build failed)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.root: str | None = None
        self.built: dict[Key, str | None] = {}
        self.uses: dict[Key, int] = {}   # compiles that wanted it

    def directory(self) -> str:
        if self.root is None:
            self.root = tempfile.mkdtemp(prefix="execbench-pch-")
            os.chmod(self.root, 0o755)   # the sandbox's uid reads it
            atexit.register(shutil.rmtree, self.root, True)
        return self.root

    def build(self, keys: list[Key]) -> None:
        """Compile the ``.gch`` of each key in one sandbox, store them read-only."""
        # linker flags (-Wl,...: cpp_build.GCOV_GUARD) would make g++ link the header: not the .gch's
        jobs = [Job(f"pch{i}", "exec", args={"argv": ["g++", *(f for f in flags if not f.startswith("-Wl,")),
                                                      "-x", "c++-header", PCH_NAME,
                                                      "-o", f"{PCH_NAME}.gch"]},
                    files={PCH_NAME: _text(headers)}, collect=[f"{PCH_NAME}.gch"], cpu_seconds=120,
                    wall_seconds=240, memory_mb=4096, max_output=1 << 16, max_collect=MAX_PCH)
                for i, (_, flags, headers) in enumerate(keys)]
        results = run_jobs(jobs, file_size_bytes=MAX_PCH)
        for key, result in zip(keys, results, strict=True):
            gch = result.files.get(f"{PCH_NAME}.gch") if result.ok else None
            if not gch:
                self.built[key] = None
                continue
            where = os.path.join(self.directory(), hashlib.sha256(repr(key).encode()).hexdigest()[:16])
            os.makedirs(where, exist_ok=True)
            for name, data in ((PCH_NAME, _text(key[2]).encode()), (f"{PCH_NAME}.gch", gch)):
                with open(os.path.join(where, name), "wb") as out:
                    out.write(data)
                os.chmod(os.path.join(where, name), 0o444)
            os.chmod(where, 0o755)
            self.built[key] = where


def _text(headers: Sequence[str]) -> str:
    return "".join(f"#include <{name}>\n" for name in headers)


_STORE = _Store()


def use(jobs: Sequence[Job], toolchain: str) -> tuple[list[Job], list[str]]:
    """``jobs`` (one step's) with each g++ compile of a source with leading standard headers
    force-including their precompiled header, built first when needed (module docs); and the
    read-only paths the sandbox needs for them ([] if none is used)."""
    wanted: dict[int, Key] = {}
    for i, job in enumerate(jobs):
        compile_ = _compile_of(job)
        if compile_ is not None and toolchain:
            headers = leading_headers(compile_[1])
            if headers:
                wanted[i] = (toolchain, compile_[0], headers)
    if not wanted:
        return list(jobs), []
    with _STORE.lock:
        for key in wanted.values():
            _STORE.uses[key] = _STORE.uses.get(key, 0) + 1
        missing = [key for key in dict.fromkeys(wanted.values())
                   if key not in _STORE.built and _STORE.uses[key] >= MIN_USES]
        if missing:
            _STORE.build(missing)
        ready = dict(_STORE.built)
    out = list(jobs)
    for i, key in wanted.items():
        where = ready.get(key)
        if where is not None:
            argv = out[i].args["argv"]
            out[i] = replace(out[i], args={**out[i].args, "argv": [*argv[:-3], "-Winvalid-pch", "-include",
                                                                   os.path.join(where, PCH_NAME), *argv[-3:]]})
    used = any(ready.get(key) for key in wanted.values())
    return out, [_STORE.directory()] if used else []
