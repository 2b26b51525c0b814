"""The repo builder's parent-side cost per candidate assertion on one big test module (issue 26).

    python benchmarks/repo_module_cost.py --compare OLD/src NEW/src
        [--spec pypi:more-itertools==11.2.1] [--module tests/test_more.py] [--limit N] [--profile]

Runs, for every maskable assertion of the module (the first ``--limit`` of them), the static
steps the builder's ``_task`` takes for an admitted assertion before its trace is sliced: the
hidden spans, the masked test text, the statement and context texts, the test file's
definitions (``context.needed_definitions``), the other files' definitions
(``context.outside_definitions``), the leak gates (``leaks.answer_visible`` on the shown
texts, ``agent_copy.leak`` on the module's agent copy, built once as ``build_test_file``
builds it). The answer is the expected operand's own text (no test runs: nothing here
starts code under test, so the figures are the parent's analysis alone).

Each tree runs in its own interpreter with ``PYTHONPATH=TREE`` (``git archive REV src | tar
-x -C DIR`` makes an older tree), one after the other; the script prints per tree the
assertions analysed, the wall and CPU seconds (CPU: the child's own, which a shared machine's
load does not inflate as much), and a sha256 of every result (hidden spans, texts,
definition names, leak reasons): equal digests mean the trees answered the same.
``--profile`` prints the child's top cProfile entries (cumulative).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path


def analyse(spec: str, module_rel: str, limit: int | None) -> dict:
    """The child: every step of the module's maskable assertions, timed, and the digest."""
    from execbench.families.repo import build
    from execbench.families.repo import tasks
    from execbench.families.repo.fairness import agent_copy, context, leaks
    from execbench.families.repo.fairness import masking
    from execbench.families.repo.selection import dvp
    from execbench.families.repo.selection import assertions as A
    from execbench.sources import repos

    repo = repos.prepare(spec)
    source = (repo.root / module_rel).read_text(encoding="utf-8")
    from execbench.contract import Outcome

    started, cpu_started = time.perf_counter(), time.process_time()
    modules = build._read_modules(repo, repo.root / module_rel, source, module_rel, Outcome())
    assert modules is not None
    items, _ = build._analyse(modules, sympy=False)
    maskable = [it for it in items.values() if isinstance(it.choice, dvp.Choice)][:limit]
    copies = masking._agent_copies(modules, items, [])
    setup, setup_cpu = time.perf_counter() - started, time.process_time() - cpu_started
    digest = hashlib.sha256()
    is_library = tasks._library_check(repo)
    for it in maskable:
        module, function, assertion, choice = it.module, it.function, it.assertion, it.choice
        answer = A.segment(module.source, assertion.operands[choice.masked])
        hidden = masking._hidden_spans(items, it, answer)
        question = A.Span.of(assertion.operands[choice.masked])
        masked_source = A.mask_text(module.source, function, (assertion, choice.masked), hidden)
        test_context = A.context_text(module.source, function)
        blank = A.statement_text(module.source, assertion, choice.masked)
        definitions = context.needed_definitions(module.source, function, [*hidden, question])
        outside, missing = context.outside_definitions(repo.root, module.rel, module.source, function, definitions,
                                                       is_library, [*hidden, question], leaks.parametrized(function))
        carried = "\n\n".join(t for t in (context.render(module.source, definitions),
                                          context.render_outside(outside)) if t)
        inputs = masking._inputs(function, assertion.operands[choice.actual])
        leak = leaks.answer_visible(
            function=function, source=module.source, masked=assertion.operands[choice.masked],
            actual=assertion.operands[choice.actual], answer=answer, inputs=inputs, hidden=hidden,
            input_parameters="{}", shown_texts=[masked_source, test_context, carried],
            context_nodes=[(d.name, d.node) for d in definitions if d.kind == "constant"])
        copy_leak = agent_copy.leak(answer, copies[module.rel], inputs) if module.rel in copies else None
        result = [it.key, [list(vars(s).values()) for s in hidden], masked_source, test_context, blank,
                  [(d.name, d.kind) for d in definitions], [(o.file, o.definition.name) for o in outside], missing,
                  carried, sorted(inputs), leak, copy_leak]
        digest.update(json.dumps(result, default=str).encode())
    return {"assertions": len(maskable), "seconds": round(time.perf_counter() - started, 2),
            "cpu_seconds": round(time.process_time() - cpu_started, 2), "setup_seconds": round(setup, 2),
            "setup_cpu_seconds": round(setup_cpu, 2), "digest": digest.hexdigest()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--compare", nargs="+", metavar="SRC", help="src directories to put on PYTHONPATH, in order")
    parser.add_argument("--spec", default="pypi:more-itertools==11.2.1")
    parser.add_argument("--module", default="tests/test_more.py")
    parser.add_argument("--limit", type=int, default=None, help="the first N maskable assertions only")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        if args.profile:
            import cProfile
            import pstats

            profiler = cProfile.Profile()
            result = profiler.runcall(analyse, args.spec, args.module, args.limit)
            pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(30)
        else:
            result = analyse(args.spec, args.module, args.limit)
        print(json.dumps(result))
        return
    rows = []
    for src in args.compare or [str(Path(__file__).resolve().parents[1] / "src")]:
        env = {**os.environ, "PYTHONPATH": str(Path(src).resolve())}
        command = [sys.executable, __file__, "--child", "--spec", args.spec, "--module", args.module,
                   *(["--limit", str(args.limit)] if args.limit else []), *(["--profile"] if args.profile else [])]
        load = os.getloadavg()[0]
        proc = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
        if args.profile:
            print(proc.stderr[-6000:], file=sys.stderr)
        rows.append({"tree": src, "load_at_start": round(load, 1), **json.loads(proc.stdout.splitlines()[-1])})
        print(json.dumps(rows[-1]), flush=True)


if __name__ == "__main__":
    main()
