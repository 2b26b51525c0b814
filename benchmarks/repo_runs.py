"""The repo family's build split by kind of test run (issue 33: the determinism runs' cost apart).

    PYTHONPATH=<tree>/src python benchmarks/repo_runs.py [SPEC ...]   # default: the default set

One cold build (no build cache; venvs and sdists in the user's cache are reused), one job,
in this process. Each test run is a job of the sandbox's job runner; its CPU and wall come
from the job's own result, summed per kind: the probe runs (traced, the key: ``run_tests``),
the first verification run of each module (``verify base``: the one run a build made before
issue 33) and the others (``verify extra``: issue 33's, at least five verification runs per
module), plus the wall of the verification sandboxes. What is left of the build's wall is the
builder's own work (analysis, masking, slicing, writing). ``isolation_cost.py runs`` cannot
split the repo family: its verification runs are jobs of one sandbox, not sandboxes.
Works on trees before issue 33 too (``families.repo.build`` has ``run_tests``/``run_many``).
"""

from __future__ import annotations

import collections
import json
import resource
import sys
import tempfile
import threading
import time
from typing import Any

from execbench import registry
from execbench.families.build import build_dataset
from execbench.families.repo import build as repo_build


def main(specs: list[str]) -> dict[str, Any]:
    rows: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0, 0.0])
    lock = threading.Lock()
    run_tests, run_many = repo_build.run_tests, repo_build.run_many

    def add(kind: str, cpu: float, wall: float) -> None:
        with lock:
            row = rows[kind]
            row[0] += 1
            row[1] += cpu
            row[2] += wall

    def timed_tests(*args: Any, **kwargs: Any) -> Any:
        report = run_tests(*args, **kwargs)
        add("probe runs", report.result.cpu, report.result.wall)
        return report

    def timed_many(repo: Any, jobs: Any) -> Any:
        started = time.perf_counter()
        reports = run_many(repo, jobs)
        add("verification sandboxes (wall)", 0.0, time.perf_counter() - started)
        for n, report in enumerate(reports):
            add("verify base" if n == 0 else "verify extra (issue 33)", report.result.cpu, report.result.wall)
        return reports

    repo_build.run_tests, repo_build.run_many = timed_tests, timed_many
    family = registry.get("repo")
    before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    try:
        manifest = build_dataset(family, specs, tempfile.mkdtemp(prefix="repo-runs-"),
                                 options=dict(family.default_options), jobs=1)
    finally:
        repo_build.run_tests, repo_build.run_many = run_tests, run_many
    wall, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"sets": specs, "wall_s": round(wall, 1), "tasks": manifest["tasks"],
            "children_cpu_s": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 1),
            "runs": {kind: {"n": int(n), "cpu_s": round(cpu, 1), "wall_s": round(w, 1)} for kind, (n, cpu, w) in rows.items()}}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:] or ["default"]), indent=1))
