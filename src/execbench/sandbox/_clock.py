"""The wall clock a run sees (issue 33, principle 6): days away from the real one.

A time namespace shifts only the monotonic and boot clocks; ``CLOCK_REALTIME`` is answered
by the vDSO without a system call, so neither a namespace nor seccomp can move it. A run
therefore gets a small preload library (``SHIM_SOURCE``) that adds an offset to what
``clock_gettime`` (``CLOCK_REALTIME``, ``_COARSE``, ``_ALARM``, ``CLOCK_TAI``),
``gettimeofday``, ``time`` and ``timespec_get`` return; the offset is an environment
variable read once when the library loads. That covers CPython (``time.time()``,
``datetime.now()``, ``date.today()``) and dynamically linked programs (C++'s
``std::chrono::system_clock``, ``time()``), and the processes they start (the variables
are inherited). The generated ``/proc/stat`` shows ``btime`` shifted the same way
(``_linux.Machine``), so boot time plus uptime tells the same date.

Which runs: every run without network access preloads the library; one in three
(``variant % 3 == 0``) has the offset 0, the others are 1 to 3,650 days (and up to a day of
seconds) ahead, drawn at random, so two consecutive runs never see the same date. The job
runner goes further (``_jobrunner._job_clock``): each job it forks gets an offset of its
own (the library's ``execbench_clock_set`` in the forked runner, the variables for what it
executes), and a job with the offset 0 sees neither variable; so the repeats of a C++
state case, jobs of one sandbox, disagree too, and so does a program that reads
``LD_PRELOAD``. Likewise the CPU count libc reports (``sysconf(_SC_NPROCESSORS_*)``,
``get_nprocs``: ``os.cpu_count()``, C++'s ``std::thread::hardware_concurrency()``) is set per
job (1 to 8, ``execbench_cpus_set`` / ``EXECBENCH_CPUS``); a sandbox's own count is in its
/sys files (``_linux.Machine``). Runs with network access (package installs) keep the real clock: TLS
certificates must be checked against it.

The library is compiled once with the system's C compiler, in the sandbox like any compile,
into the user's cache dir (``<cache>/sandbox/clock-<sha256 of the source>.so``; written
atomically, so a half-written file is never used). Without a compiler (or if the compile
fails) runs keep the real clock, ``isolation["clock"]`` says ``"real"`` and a warning is
logged once: the determinism check then varies only the time zone, which moves the local
date only near midnight (docs/sandbox.md).
"""

from __future__ import annotations

import contextvars
import hashlib
import logging
import os
import platform
import shutil
import threading
from pathlib import Path
from typing import Any, Callable

from ._limits import Limits

Runner = Callable[..., Any]   # sandbox._run.run (passed in: this module is imported by it)

OFFSET_ENV = "EXECBENCH_CLOCK_OFFSET"
CPUS_ENV = "EXECBENCH_CPUS"   # set per job by the job runner only (sysconf, get_nprocs)
MAX_DAYS = 3650
_log = logging.getLogger(__name__)

SHIM_SOURCE = r"""
/* execbench: the wall clock of a sandboxed run, EXECBENCH_CLOCK_OFFSET seconds ahead, and
   (EXECBENCH_CPUS > 0) the CPU count libc reports. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <sys/time.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

typedef int (*gettime_fn)(clockid_t, struct timespec *);
typedef long (*sysconf_fn)(int);
typedef int (*nprocs_fn)(void);
static gettime_fn real_gettime;
static long long offset;
static long cpus;

__attribute__((constructor)) static void execbench_clock_init(void) {
    const char *value = getenv("EXECBENCH_CLOCK_OFFSET");
    const char *count = getenv("EXECBENCH_CPUS");
    real_gettime = (gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
    if (value != NULL) offset = strtoll(value, NULL, 10);
    if (count != NULL) cpus = strtol(count, NULL, 10);
}

static int shifted(clockid_t clock) {
    return clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE || clock == CLOCK_TAI
        || clock == CLOCK_REALTIME_ALARM;
}

int clock_gettime(clockid_t clock, struct timespec *ts) {
    if (real_gettime == NULL) real_gettime = (gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
    int ret = real_gettime(clock, ts);
    if (ret == 0 && ts != NULL && shifted(clock)) ts->tv_sec += offset;
    return ret;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
    struct timespec ts;
    (void)tz;
    if (tv == NULL) return 0;
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0) return -1;
    tv->tv_sec = ts.tv_sec;
    tv->tv_usec = ts.tv_nsec / 1000;
    return 0;
}

time_t time(time_t *out) {
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0) return (time_t)-1;
    if (out != NULL) *out = ts.tv_sec;
    return ts.tv_sec;
}

/* The job runner moves the clock and the CPU count of each job it forks (sandbox/_jobrunner.py). */
void execbench_clock_set(long long seconds) { offset = seconds; }
void execbench_cpus_set(long count) { cpus = count; }

int timespec_get(struct timespec *ts, int base) {
    if (base != TIME_UTC || clock_gettime(CLOCK_REALTIME, ts) != 0) return 0;
    return base;
}

long sysconf(int name) {
    static sysconf_fn real;
    if (cpus > 0 && (name == _SC_NPROCESSORS_ONLN || name == _SC_NPROCESSORS_CONF)) return cpus;
    if (real == NULL) real = (sysconf_fn)dlsym(RTLD_NEXT, "sysconf");
    return real(name);
}

int get_nprocs(void) {
    static nprocs_fn real;
    if (cpus > 0) return (int)cpus;
    if (real == NULL) real = (nprocs_fn)dlsym(RTLD_NEXT, "get_nprocs");
    return real();
}

int get_nprocs_conf(void) {
    static nprocs_fn real;
    if (cpus > 0) return (int)cpus;
    if (real == NULL) real = (nprocs_fn)dlsym(RTLD_NEXT, "get_nprocs_conf");
    return real();
}
/* A job of the runner that opens a process's status file (NoNewPrivs and Seccomp there are
   the sandbox's in every run) ends at once with the reason: execbench_status_refuse(1) in the
   forked job (sandbox/_jobrunner.py). The file is known by what the kernel says the new
   descriptor is (procfs, /proc/<pid>[/task/<tid>]/status), so every name reaches it:
   relative paths, links, a directory descriptor. */
#define EXECBENCH_PROC_MAGIC 0x9fa0
#ifndef O_TMPFILE
#define O_TMPFILE 0   /* older C libraries: only O_CREAT then carries a mode */
#endif
static int refuse_status;
void execbench_status_refuse(int on) { refuse_status = on; }

static const char *digits(const char *p) {
    const char *start = p;
    while (*p >= '0' && *p <= '9') p++;
    return p == start ? NULL : p;
}

static int status_file(const char *path) {
    const char *p;
    if (strncmp(path, "/proc/", 6) != 0 || (p = digits(path + 6)) == NULL) return 0;
    if (strcmp(p, "/status") == 0) return 1;
    if (strncmp(p, "/task/", 6) != 0 || (p = digits(p + 6)) == NULL) return 0;
    return strcmp(p, "/status") == 0;
}

static int checked(int fd) {
    struct statfs fs;
    char link[48], target[256];
    int saved = errno;
    ssize_t n;
    if (fd < 0 || !refuse_status) return fd;
    if (fstatfs(fd, &fs) == 0 && fs.f_type == EXECBENCH_PROC_MAGIC) {
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        n = readlink(link, target, sizeof target - 1);
        if (n > 0) {
            target[n] = 0;
            if (status_file(target)) {
                static const char head[] = "execbench: the program read ";
                static const char tail[] = ": its NoNewPrivs and Seccomp lines are the sandbox's, "
                                           "not a user's machine's (issue 33): refused\n";
                (void)!write(2, head, sizeof head - 1);
                (void)!write(2, target, (size_t)n);
                (void)!write(2, tail, sizeof tail - 1);
                _exit(1);
            }
        }
    }
    errno = saved;
    return fd;
}

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);
typedef int (*open2_fn)(const char *, int);
typedef int (*openat2_fn)(int, const char *, int);
typedef FILE *(*fopen_fn)(const char *, const char *);

#define MODE_OF(flags) mode_t mode = 0; \
    if ((flags) & (O_CREAT | O_TMPFILE)) { va_list ap; va_start(ap, flags); mode = va_arg(ap, mode_t); va_end(ap); }
#define REAL(type, name) static type real; if (real == NULL) real = (type)dlsym(RTLD_NEXT, name)

int open(const char *path, int flags, ...) { MODE_OF(flags) REAL(open_fn, "open"); return checked(real(path, flags, mode)); }
int open64(const char *path, int flags, ...) { MODE_OF(flags) REAL(open_fn, "open64"); return checked(real(path, flags, mode)); }
int openat(int dir, const char *path, int flags, ...) {
    MODE_OF(flags) REAL(openat_fn, "openat"); return checked(real(dir, path, flags, mode)); }
int openat64(int dir, const char *path, int flags, ...) {
    MODE_OF(flags) REAL(openat_fn, "openat64"); return checked(real(dir, path, flags, mode)); }
int __open_2(const char *path, int flags) { REAL(open2_fn, "__open_2"); return checked(real(path, flags)); }
int __open64_2(const char *path, int flags) { REAL(open2_fn, "__open64_2"); return checked(real(path, flags)); }
int __openat_2(int dir, const char *path, int flags) { REAL(openat2_fn, "__openat_2"); return checked(real(dir, path, flags)); }
int __openat64_2(int dir, const char *path, int flags) {
    REAL(openat2_fn, "__openat64_2"); return checked(real(dir, path, flags)); }
FILE *fopen(const char *path, const char *how) {
    REAL(fopen_fn, "fopen"); FILE *f = real(path, how); if (f != NULL) checked(fileno(f)); return f; }
FILE *fopen64(const char *path, const char *how) {
    REAL(fopen_fn, "fopen64"); FILE *f = real(path, how); if (f != NULL) checked(fileno(f)); return f; }

/* An audit hook for CPython that passes only chosen events on to a Python hook (the repo
   recorder's, families/repo/verification/_plugin.py). CPython calls every hook for every
   audited event: a traced test run has tens of thousands (frame.f_code reads, id(), imports),
   each a Python call and a traced frame; here they cost a string search. The events are set
   once (later calls do nothing); the Python API is looked up in the running interpreter. */
typedef struct _object PyObject;
typedef PyObject *(*py_call_fn)(PyObject *, ...);
typedef PyObject *(*py_str_fn)(const char *);
typedef void (*py_ref_fn)(PyObject *);
static char audit_events[4096];
static int audit_events_set;
static py_call_fn py_call;
static py_str_fn py_str;
static py_ref_fn py_decref;

int execbench_audit_ready(const char *events) {
    if (audit_events_set || events == NULL || strlen(events) + 2 > sizeof audit_events) return 0;
    py_call = (py_call_fn)dlsym(RTLD_DEFAULT, "PyObject_CallFunctionObjArgs");
    py_str = (py_str_fn)dlsym(RTLD_DEFAULT, "PyUnicode_FromString");
    py_decref = (py_ref_fn)dlsym(RTLD_DEFAULT, "Py_DecRef");
    if (py_call == NULL || py_str == NULL || py_decref == NULL) return 0;
    audit_events[0] = '\n';
    strcpy(audit_events + 1, events);   /* "name\nname\n" */
    audit_events_set = 1;
    return 1;
}

static int audit_wanted(const char *event) {
    size_t n = strlen(event);
    const char *p = audit_events;
    if (n == 0) return 0;
    while ((p = strstr(p + 1, event)) != NULL)
        if (p[-1] == '\n' && p[n] == '\n') return 1;
    return 0;
}

int execbench_audit_hook(const char *event, PyObject *args, void *hook) {
    PyObject *name, *result;
    if (!audit_events_set || !audit_wanted(event)) return 0;
    if ((name = py_str(event)) == NULL) return -1;
    result = py_call((PyObject *)hook, name, args, (PyObject *)NULL);
    py_decref(name);
    if (result == NULL) return -1;
    py_decref(result);
    return 0;
}
"""

# Set while the library itself is compiled: that run keeps the real clock (no recursion).
_building: contextvars.ContextVar[bool] = contextvars.ContextVar("execbench_clock_building", default=False)
_lock = threading.Lock()
_state: dict[str, str | None] = {}


def _cache_dir() -> Path:
    """The user's cache dir (as ``dataset.cache.cache_dir``; the sandbox layer cannot import it)."""
    explicit = os.environ.get("EXECBENCH_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "execbench"


def shim_name() -> str:
    """The library's file name: the source's content (and the machine) key it."""
    digest = hashlib.sha256(f"{platform.machine()}\0{SHIM_SOURCE}".encode()).hexdigest()[:24]
    return f"clock-{digest}.so"


def _compile(target: Path, run: Runner) -> str | None:
    """Compile the library in the sandbox (``run``) into ``target``; None, or why it could not
    be made."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return "no C compiler (cc, gcc) on PATH"
    token = _building.set(True)
    try:
        result = run([compiler, "-shared", "-fPIC", "-O2", "-o", "clock.so", "clock.c", "-ldl"],
                     files={"clock.c": SHIM_SOURCE}, collect=["clock.so"],
                     limits=Limits(cpu_seconds=60, wall_seconds=120))
    finally:
        _building.reset(token)
    blob = result.files.get("clock.so", b"")
    if not result.ok or not blob.startswith(b"\x7fELF"):
        return f"compile failed: {result.reason()}"
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}")
    partial.write_bytes(blob)
    os.chmod(partial, 0o644)
    os.replace(partial, target)
    return None


def shim(run: Runner) -> str | None:
    """The preload library's path (compiled with ``run`` on first use), or None without one.
    A library found once is used while it exists (a later change of the cache dir, as in
    tests, does not compile it again); one that disappeared is made again."""
    if _building.get():
        return None
    with _lock:
        known = _state.get("path")
        if known is not None and os.path.isfile(known):
            return known
        target = _cache_dir() / "sandbox" / shim_name()
        problem = None
        if not target.is_file():
            try:
                problem = _compile(target, run)
            except Exception as exc:  # noqa: BLE001 - no library: the real clock, said aloud
                problem = f"{type(exc).__name__}: {exc}"
        if problem is not None:
            if _state.get("problem") != problem:
                _log.warning("sandboxed runs keep the real wall clock (the determinism check "
                             "cannot shift the date): %s", problem)
            _state["problem"] = problem
            return None
        _state["path"] = str(target)
        return str(target)


def library(run: Runner) -> str | None:
    """The preload library's path for a caller that loads it itself (the repo recorder's
    audit filter), or None without one."""
    return None if _building.get() else shim(run)


def offset(variant: int) -> int:
    """Seconds the run's wall clock is ahead: 0 in one run of three, else 1 to MAX_DAYS days
    and up to a day more (see the module docs). The job runner draws its jobs' the same way
    (it cannot import this module: keep ``_jobrunner._job_clock`` in step)."""
    if variant % 3 == 0:
        return 0
    draw = int.from_bytes(os.urandom(4), "little")
    return (1 + draw % MAX_DAYS) * 86400 + (draw >> 12) % 86400


def status(run: Runner) -> str:
    """isolation["clock"]: "shifted" (the library is there) or "real"."""
    return "real" if _building.get() or shim(run) is None else "shifted"


def for_run(variant: int, network: bool, run: Runner) -> tuple[int, dict[str, str], list[str], str]:
    """(offset, environment, paths to make readable, isolation["clock"]) of a run."""
    if network or _building.get():
        return 0, {}, [], "real"
    path = shim(run)
    if path is None:
        return 0, {}, [], "real"
    seconds = offset(variant)
    return seconds, {"LD_PRELOAD": path, OFFSET_ENV: str(seconds)}, [path], "shifted"
