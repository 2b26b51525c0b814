"""What issue 33's isolation costs, split by cause (run it on an idle machine).

    python benchmarks/isolation_cost.py mechanisms [--n 40]
    python benchmarks/isolation_cost.py runs [--sets humaneval classic repo]

``mechanisms``: the per-sandbox cost of each mechanism issue 33 added. Three workloads
(``run(["/bin/true"])``, ``run_python(["-c", "pass"])``, one ``run_jobs`` sandbox with 8 tiny
Python jobs) are timed (median wall and CPU of this process and its children over ``--n``
rounds, the configurations interleaved round by round) with everything on, then with one
mechanism taken out *by monkeypatching this benchmark process only* (no option or variable a
build could use exists): ``clock`` (the preload library: no LD_PRELOAD, no bind of it),
``machine`` (the /sys CPU files, the /proc/cpuinfo and /proc/stat overlay, the extra mounts),
``affinity`` (no CPU left out), ``filters`` (no extra seccomp filters), ``disk`` (no per-run
tmpfs: the run writes the host's temp dir, as before principle 5), and ``all`` of them. The
difference to ``on`` is that mechanism's cost. Also printed: the job runner's ``_vary``
(imports and frozen ballast, per sandbox, measured in a fresh interpreter).

``runs``: one cold build per set (``--no-cache``, one job: every sandbox's CPU is its own
``RUSAGE_CHILDREN`` delta), the check seeds pinned to five (``CHECK_SEEDS``) so that the runs
can be told apart: each ``sandbox.run`` is counted and timed as the key run (hash seed 0),
a base check run (the first ``repeats - 1`` seeds: what a build did before issue 33), an
extra check run (the rest: issue 33's hash-order suspects, repo verification), or other
(compiles, installs, probes); plus venv installs and RECORD checks (``verify_venv``). The
extra check runs' share is the cost issue 33 asks to report apart from the 15 %.

Compare trees by putting another checkout's ``src`` first on PYTHONPATH. The machine this
was written on is shared: no figure here was measured on it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Iterator

CHECK_SEEDS = [1846251371, 3399061897, 2786313131, 951357753, 4123987654]
SETS = {"humaneval": ("trace", "humaneval"), "advanced": ("trace", "advanced"), "classic": ("state", "classic"),
        "simplex": ("state", "networkx-simplex"), "repo": ("repo", "default")}


def _cpu() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


@contextlib.contextmanager
def _without(names: tuple[str, ...]) -> Iterator[None]:
    """This process's sandbox with the mechanisms ``names`` taken out (monkeypatched)."""
    from execbench.sandbox import _child, _clock, _linux, _run

    saved: list[tuple[Any, str, Any]] = []

    def patch(owner: Any, attr: str, value: Any) -> None:
        saved.append((owner, attr, getattr(owner, attr)))
        setattr(owner, attr, value)

    if "clock" in names:
        patch(_clock, "for_run", lambda variant, network, run: (0, {}, [], "real"))
    if "machine" in names:
        patch(_child, "_machine", lambda variant, clock_offset=0: _linux.Machine())
    if "affinity" in names:
        patch(_child, "_affinity", lambda variant: [])
    if "filters" in names:
        patch(_linux, "install_allow_filter", lambda: None)
    if "disk" in names:
        write = _run._write_workdir
        patch(_run, "_open_disk", lambda limits, writable, uid: None)
        patch(_run, "_write_workdir", lambda workdir, files, uid, exists=False: write(workdir, files, uid, True))
    try:
        yield
    finally:
        for owner, attr, value in reversed(saved):
            setattr(owner, attr, value)


def _workloads() -> dict[str, Callable[[], object]]:
    from execbench.sandbox import run, run_python
    from execbench.sandbox.jobs import Job, run_jobs

    jobs = [Job(f"j{i}", "execbench.sandbox._jobrunner:exec_job", args={"argv": ["/bin/true"]}) for i in range(8)]
    return {"run(/bin/true)": lambda: run(["/bin/true"]),
            "run_python(-c pass)": lambda: run_python(["-c", "pass"]),
            "run_jobs(8 jobs)": lambda: run_jobs(jobs)}


def _vary_cost(variant: int, vary: bool) -> float:
    code = ("import gc, time; from execbench.sandbox import _jobrunner as j; t = time.process_time(); "
            f"b = j._vary({variant}) if {vary} else []; gc.collect(); gc.freeze(); print(time.process_time() - t)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout)


def mechanisms(n: int) -> None:
    from execbench.sandbox import capabilities

    print("isolation", capabilities())
    configs = {"on": (), "clock": ("clock",), "machine": ("machine",), "affinity": ("affinity",),
               "filters": ("filters",), "disk": ("disk",), "all": ("clock", "machine", "affinity", "filters", "disk")}
    for label, fn in _workloads().items():
        samples: dict[str, tuple[list[float], list[float]]] = {c: ([], []) for c in configs}
        for names in configs.values():   # warm-up (the library is compiled, imports done)
            with _without(names):
                fn()
        for _ in range(n):
            for config, names in configs.items():
                with _without(names):
                    c, w = _cpu(), time.perf_counter()
                    fn()
                    samples[config][0].append(time.perf_counter() - w)
                    samples[config][1].append(_cpu() - c)
        base_wall, base_cpu = (statistics.median(v) for v in samples["on"])
        print(f"\n{label}: everything on: wall {base_wall * 1e3:.1f} ms, CPU {base_cpu * 1e3:.1f} ms")
        for config in list(configs)[1:]:
            wall, cpu = (statistics.median(v) for v in samples[config])
            print(f"  without {config:9s} wall {wall * 1e3:7.1f} ms ({(base_wall - wall) * 1e3:+6.1f} ms is its cost)"
                  f"   CPU {cpu * 1e3:7.1f} ms ({(base_cpu - cpu) * 1e3:+6.1f})")
    varied = statistics.median(_vary_cost(v, True) for v in range(16))
    plain = statistics.median(_vary_cost(v, False) for v in range(16))
    print(f"\njob runner's _vary (imports, frozen ballast) per sandbox: {(varied - plain) * 1e3:.1f} ms CPU "
          f"(median over variants 0-15: {varied * 1e3:.1f} vs {plain * 1e3:.1f} ms)")


def _classify(argv: list[str], env: dict[str, str], ports: object, base: set[int], extra: set[int]) -> str:
    if ports:
        return "install (network)"
    seed = env.get("PYTHONHASHSEED")
    if seed is None or not seed.isdigit():
        return "other (compile, probe, no hash seed)"
    value = int(seed)
    return ("key run (seed 0)" if value == 0 else "base check run" if value in base
            else "extra check run (issue 33)" if value in extra else "other seed")


def runs(sets: list[str]) -> None:
    from execbench import registry
    from execbench.families.build import build_dataset
    from execbench.sandbox import _run
    from execbench.sources import venvs  # where the venv installs and RECORD checks live

    for name in sets:
        family, source = SETS[name]
        plugin = registry.get(family)
        repeats = int(plugin.default_options.get("repeats", 3))
        base, extra = set(CHECK_SEEDS[:repeats - 1]), set(CHECK_SEEDS[repeats - 1:])
        totals: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
        real_run = _run.run
        real_verify, real_install = venvs.verify_venv, venvs._install_venv

        def counted(kind: str, fn: Callable[..., Any], totals: dict[str, list[float]] = totals,
                    base: set[int] = base, extra: set[int] = extra) -> Callable[..., Any]:
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                c, w = _cpu(), time.perf_counter()
                try:
                    return fn(*args, **kwargs)
                finally:
                    label = kind if kind != "run" else _classify(
                        list(args[0]), dict(kwargs.get("env") or {}), kwargs.get("network_ports"), base, extra)
                    entry = totals[label]
                    entry[0] += 1
                    entry[1] += time.perf_counter() - w
                    entry[2] += _cpu() - c
            return wrapper

        _run.run = counted("run", real_run)
        venvs.verify_venv = counted("verify_venv (RECORD check)", real_verify)
        venvs._install_venv = counted("venv install (incl. its sandbox run)", real_install)
        out = Path(tempfile.mkdtemp(prefix="execbench-isolation-")) / "out"
        c, w = _cpu(), time.perf_counter()
        try:
            manifest = build_dataset(plugin, [source], out, jobs=1,
                                     options={**plugin.default_options, "check_seeds": ",".join(map(str, CHECK_SEEDS))})
        finally:
            _run.run = real_run
            venvs.verify_venv, venvs._install_venv = real_verify, real_install
        wall, cpu = time.perf_counter() - w, _cpu() - c
        print(f"\n{name} ({family} {source}): {manifest['tasks']} tasks, build wall {wall:.1f} s, CPU {cpu:.1f} s "
              f"(one job, check seeds pinned; load {os.getloadavg()[0]:.1f})")
        for label, (count, t_wall, t_cpu) in sorted(totals.items()):
            print(f"  {label:40s} {int(count):6d} x  wall {t_wall:8.1f} s ({t_wall / wall:6.1%})"
                  f"  CPU {t_cpu:8.1f} s ({t_cpu / max(cpu, 1e-9):6.1%})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    mech = sub.add_parser("mechanisms")
    mech.add_argument("--n", type=int, default=40)
    built = sub.add_parser("runs")
    built.add_argument("--sets", nargs="+", default=["humaneval", "classic", "repo"], choices=list(SETS))
    args = parser.parse_args()
    import execbench
    print("execbench from", execbench.__file__)
    if args.what == "mechanisms":
        mechanisms(args.n)
    else:
        runs(args.sets)


if __name__ == "__main__":
    main()
