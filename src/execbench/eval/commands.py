"""Terminal front ends of ``execbench eval``, ``execbench demo`` and ``execbench models``.

``cli.py`` declares the options and calls these; they print with rich and return an exit code.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from execbench.models import names as models
from execbench.eval.protocol import EvalSetupError
from execbench.progress import LoggedProgress
from execbench.usererror import INTERRUPTED


def _errors() -> tuple[type[BaseException], ...]:
    from execbench.dataset import DatasetError
    from execbench.eval.replay import ReplayError
    from execbench.models.server import ServerError

    return (EvalSetupError, models.ModelError, DatasetError, ServerError, ReplayError, OSError)


def _next_steps(console: Console, log_dir: Path, dataset: Path | None = None, report: Path | None = None) -> None:
    report = report or Path("report.html")
    console.print(f"[bold]next:[/] [cyan]inspect view --log-dir {log_dir}[/]   (browse every sample, prompt and score)")
    console.print(f"      [cyan]execbench report {log_dir} -o {report}[/]   (tables, plots and statistics)")
    if dataset is not None:
        console.print(f"      [cyan]execbench eval {dataset} --model openai-api/<service>/<model>[/]   "
                      "(any other model; see docs/eval.md)")


def _report(console: Console, outcome: Any, dataset: Path | None = None, report: Path | None = None) -> int:
    from execbench.eval.summary import render

    render(outcome.summaries, console)
    replay = getattr(outcome, "replay", None)
    if replay:
        console.print(f"replayed {replay['replies']} recorded replies from {escape(replay['file'])} over "
                      f"{replay['tasks']} tasks" + (f"; [yellow]{replay['missing']} tasks had no recorded reply[/] "
                                                   "(scored as no answer: wrong in C/N, not in C/R)"
                                                   if replay["missing"] else ""))
    for summary in outcome.summaries:
        total = summary["total"]
        if total["errors"] or total["not_run"]:
            console.print(f"[yellow]{total['errors']} failed requests and {total['not_run']} samples not run:[/] "
                          "they count as wrong in C/N; run the same command again to retry only those.")
        console.print(f"log: {summary['log']}")
    console.print(f"{'done' if outcome.success else '[yellow]incomplete[/]'} in {outcome.seconds:.1f} s")
    _next_steps(console, outcome.log_dir, dataset, report)
    return 0 if outcome.success else 1


def _run(console: Console, request: Any) -> tuple[Any, int]:
    """run_eval with the errors a user can fix turned into messages: (outcome or None, exit code)."""
    from execbench.eval.passthrough import PassthroughError
    from execbench.eval.run import run_eval

    errors: tuple[type[BaseException], ...] = (*_errors(), PassthroughError)
    try:
        return run_eval(request, status=lambda message: console.print(f"[dim]{message}[/]")), 0
    except KeyboardInterrupt:
        console.print(f"[yellow]{INTERRUPTED}[/]")
        return None, 130
    except errors as exc:
        console.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
        return None, 2


def eval_command(console: Console, request: Any) -> int:
    outcome, code = _run(console, request)
    return code if outcome is None else _report(console, outcome, request.dataset)


def models_command(console: Console, as_json: bool = False) -> int:
    rows = models.available()
    if as_json:
        import json

        print(json.dumps(rows, indent=2))
        return 0
    table = Table(title="models for `execbench eval --model …`", title_justify="left")
    for column in ("model", "kind", "status", "detail"):
        table.add_column(column, overflow="fold")
    for row in rows:
        style = {"available": "green", "configured": "green", "missing": "red"}.get(row["status"])
        table.add_row(row["model"], row["kind"], f"[{style}]{row['status']}[/]" if style else row["status"], row["detail"])
    console.print(table)
    console.print("Inspect lists every provider: https://inspect.aisi.org.uk/providers.html "
                  "(any `provider/model` name works with --model).")
    return 0


def _phases(out: Path, phases: dict[str, float], started: float) -> str:
    """The demo's phase times, also written to ``out/timings.json`` (benchmarks/demo_time.py reads it)."""
    import json

    record = {name: round(seconds, 2) for name, seconds in phases.items()}
    record["total"] = round(time.perf_counter() - started, 2)
    (out / "timings.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return ", ".join(f"{name.replace('_', ' ')} {seconds:.0f} s" for name, seconds in record.items())


def _demo_replays(console: Console, out: Path, replays: list[Any]) -> tuple[list[Any], int]:
    """Build the tasks of each shipped replay set and play its published predictions back into
    ``out/logs`` (eval/demo.py): (outcomes, exit code)."""
    from execbench.eval.demo import build_replay_dataset
    from execbench.eval.run import EvalRequest

    outcomes: list[Any] = []
    errors: tuple[type[BaseException], ...] = (RuntimeError, *_errors())
    for replay in replays:
        console.print(f"replaying [bold]replay/{escape(replay.stem)}[/]: {escape(replay.label)}")
        try:
            dataset = build_replay_dataset(out, replay)
        except errors as exc:
            console.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
            return outcomes, 2
        request = EvalRequest(dataset=dataset, model=replay.model, variant=replay.variant, log_dir=out / "logs",
                              defaults={"display": "none"})
        outcome, code = _run(console, request)
        if outcome is None:
            return outcomes, code
        outcomes.append(outcome)
    return outcomes, 0


def demo_command(console: Console, out: Path, *, per_source: int, max_tokens: int | None, extra: list[str],
                 sources: dict[str, tuple[str, ...]] | None = None, replays: list[Any] | None = None) -> int:
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

    from execbench.eval.demo import CANDIDATES_PER_SOURCE, build_demo_dataset, check_demo_out, demo_replays
    from execbench.eval.run import EvalRequest

    started = time.perf_counter()
    out = out.expanduser().resolve()
    try:
        check_demo_out(out)
        models.resolve(models.LOCAL)  # fail fast, before building anything, if the model is missing
    except _errors() as exc:
        console.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
        return 2
    console.rule("[bold]1/2 build a small dataset from the built-in sources")
    columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("{task.fields[tasks]} tasks"), TimeElapsedColumn())
    with LoggedProgress(*columns, console=console) as bar:
        def progress(label: str) -> Any:
            handle = bar.add_task(f"build {label}", total=CANDIDATES_PER_SOURCE, tasks=0)

            def update(done: int, total: int, n_tasks: int, n_rejected: int) -> None:
                bar.update(handle, completed=done, total=total, tasks=n_tasks)

            return update

        errors: tuple[type[BaseException], ...] = (RuntimeError, *_errors())
        try:
            demo = build_demo_dataset(out, per_source=per_source, progress=progress, sources=sources)
        except errors as exc:
            console.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
            return 2
    phases = {"build": time.perf_counter() - started}
    for label, why in demo.skipped.items():
        console.print(f"[yellow]skipped {label}:[/] {escape(why)}")
    parts = ", ".join(f"{count} from {label}" for label, count in demo.by_source.items())
    console.print(f"dataset: {demo.path} ({demo.tasks} tasks: {parts})")
    console.rule("[bold]2/2 evaluate the local model (SmolLM2-135M-Instruct, offline)")
    # no --max-tokens: each sample gets what its answer needs (eval/run.py), so none is cut off by construction
    defaults: dict[str, Any] = {} if max_tokens is None else {"max_tokens": max_tokens}
    if not os.environ.get("INSPECT_DISPLAY"):
        defaults["display"] = "rich"  # inline progress under the build's, not a full-screen app
    request = EvalRequest(dataset=demo.path, model=models.LOCAL, mode="direct", log_dir=out / "logs", extra=extra,
                          defaults=defaults)
    outcome, code = _run(console, request)
    if outcome is None:
        return code
    if outcome.server is not None:
        phases["server_start"] = outcome.server["startup_seconds"]
    phases["eval"] = outcome.seconds
    console.rule("[bold]replay published predictions (recorded replies of a real model, offline)")
    replay_started = time.perf_counter()
    replayed, replay_code = _demo_replays(console, out, demo_replays() if replays is None else replays)
    phases["replay"] = time.perf_counter() - replay_started
    console.rule("[bold]summary")
    code = _report(console, outcome, report=out / "report.html")
    for done in replayed:
        from execbench.eval.summary import render

        console.print(f"[bold]replayed, not run:[/] {escape(str(done.replay['file']))} "
                      f"({done.replay['replies']} recorded replies)")
        render(done.summaries, console)
    console.print(f"phases: {_phases(out, phases, started)}")
    console.print(f"demo finished in {time.perf_counter() - started:.0f} s. The 135M model is tiny: expect low "
                  "scores; the point is the pipeline" + (", and the replayed published predictions show what a real "
                                                          "model's failure profile looks like in the report" if replayed
                                                          else "") + ". Try a real model with "
                  f"[cyan]execbench eval {demo.path} --model …[/]")
    return code or replay_code
