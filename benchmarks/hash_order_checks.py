"""What the extra determinism runs of hash-order suspects cost (issue 33, principle 6).

    python benchmarks/hash_order_checks.py [--sets trace:humaneval trace:advanced cruxeval:cruxeval \
        state:classic state:networkx-simplex repo:toolz] [--rounds 1]

Per set, two cold builds (no build cache) with the same pinned check seeds: ``base`` pins two
(repeats 3, no extra run: what a build did before issue 33; the repo family, repeats 2, uses
the first) and ``checked`` pins five (the same first, then the extra seeds a build now draws
for suspects). Printed per set:
wall and CPU seconds of each build (the sandboxes' processes: ``RUSAGE_CHILDREN``), their
ratio, the share of suspect programs (``contract/hashorder.py``), and whether tasks differ
(any task the extra runs reject is named). Rounds alternate the order. Run it on an idle
machine; this one is shared.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

BASE_SEEDS = "1846251371,3399061897"
CHECKED_SEEDS = BASE_SEEDS + ",2786313131,951357753,4123987654"


def _build(family: str, source: str, seeds: str) -> tuple[float, float, dict, set[str]]:
    from execbench import registry
    from execbench.dataset import read_tasks
    from execbench.families.build import build_dataset

    plugin = registry.get(family)
    out = Path(tempfile.mkdtemp(prefix="execbench-bench-")) / "out"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    manifest = build_dataset(plugin, [source], out, options={**plugin.default_options, "check_seeds": seeds}, jobs=2)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return wall, cpu, manifest, {task.id for task in read_tasks(out)}


def _suspects(family: str, source: str) -> tuple[int, int]:
    from execbench import registry
    from execbench.contract import hashorder

    plugin = registry.get(family)
    programs = []
    for candidate in plugin.candidates([source], dict(plugin.default_options)):
        payload = candidate.payload
        if "problems" in payload:
            programs += [p["code"] for p in payload["problems"]]
        elif payload.get("language", "python") == "python" and "program" in payload:
            programs.append(payload["program"])
        elif family == "repo":   # every module is a suspect (its library is not read)
            programs.append("set()")
    return sum(map(hashorder.may_see_hash_order, programs)), len(programs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=["trace:humaneval", "trace:advanced", "cruxeval:cruxeval",
                                                      "state:classic", "state:networkx-simplex"])
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    for spec in args.sets:
        family, source = spec.split(":", 1)
        suspects, total = _suspects(family, source)
        print(f"{spec}: {suspects}/{total} programs are hash-order suspects")
        for n in range(args.rounds):
            order = [("base", BASE_SEEDS), ("checked", CHECKED_SEEDS)]
            results = {}
            for name, seeds in order if n % 2 == 0 else order[::-1]:
                if family == "repo" and name == "base":   # repeats 2: one verification seed
                    seeds = seeds.split(",")[0]
                results[name] = _build(family, source, seeds)
            (bw, bc, bm, bt), (cw, cc, cm, ct) = results["base"], results["checked"]
            print(f"  round {n}: base {bw:.1f} s wall {bc:.1f} s CPU, checked {cw:.1f} s wall {cc:.1f} s CPU "
                  f"(x{cw / bw:.2f} wall, x{cc / bc:.2f} CPU); tasks {len(bt)} -> {len(ct)}; "
                  f"hashes {bm['content_hash'][:19]} / {cm['content_hash'][:19]}")
            for task in sorted(bt - ct):
                print(f"    rejected only by the extra runs: {task}")


if __name__ == "__main__":
    main()
