"""The ``execbench`` command line: build, grade, eval, report, demo, models."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from execbench import __version__

app = typer.Typer(
    name="execbench",
    help="Execution-grounded code-reasoning benchmarks: build tasks from real code, evaluate models, explain failures.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console(stderr=True)


def _fail(message: str) -> None:
    console.print(f"[bold red]error:[/] {message}")
    raise typer.Exit(2)


def _parse_settings(pairs: list[str], defaults: dict[str, Any]) -> dict[str, Any]:
    options = dict(defaults)
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or key not in defaults:
            _fail(f"--set {pair!r}: expected KEY=VALUE with KEY one of {', '.join(sorted(defaults)) or '(none)'}")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        if type(value) is not type(defaults[key]):
            _fail(f"--set {key}: expected a {type(defaults[key]).__name__}, got {raw!r}")
        options[key] = value
    return options


@app.callback(invoke_without_command=True)
def _root(version: bool = typer.Option(False, "--version", help="Print the version and exit.")) -> None:
    if version:
        typer.echo(__version__)
        raise typer.Exit()


@app.command()
def build(
    family: str = typer.Argument(..., help="Task family: trace (state and repo as they land)."),
    sources: list[str] = typer.Argument(..., help="Sources: 'humaneval', a built-in corpus name (e.g. 'advanced') or case directories."),
    out: Path = typer.Option(..., "-o", "--out", help="Dataset directory to write."),
    jobs: int = typer.Option(2, "--jobs", "-j", min=1, help="Candidates built in parallel."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Build only the first N candidates."),
    settings: list[str] = typer.Option([], "--set", help="Family build option KEY=VALUE (repeatable), e.g. --set repeats=3."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Ignore and do not fill the build cache."),
) -> None:
    """Build a dataset of tasks whose answers come from running the code."""
    from execbench import families
    from execbench.dataset.cache import BuildCache
    from execbench.families.base import SourceError
    from execbench.families.build import build_dataset

    try:
        plugin = families.get(family)
    except KeyError as exc:
        _fail(str(exc.args[0]))
    options = _parse_settings(settings, plugin.default_options)
    cache = BuildCache(enabled=not no_cache)
    columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("{task.fields[tasks]} tasks, {task.fields[rejected]} rejected"), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=False) as bar:
        task_bar = bar.add_task(f"build {family}", total=None, tasks=0, rejected=0)

        def progress(done: int, total: int, n_tasks: int, n_rejected: int) -> None:
            bar.update(task_bar, completed=done, total=total, tasks=n_tasks, rejected=n_rejected)

        try:
            manifest = build_dataset(plugin, sources, out, options=options, jobs=jobs, cache=cache,
                                     progress=progress, limit=limit)
        except SourceError as exc:
            _fail(str(exc))
        finally:
            cache.close()
    table = Table(title=f"{out}", show_header=True)
    table.add_column("arm")
    table.add_column("tasks", justify="right")
    for arm, count in manifest["tasks_by_arm"].items():
        table.add_row(arm, str(count))
    for stage, count in manifest["rejected_by_stage"].items():
        table.add_row(f"[dim]rejected: {stage}[/]", str(count))
    console.print(table)
    console.print(f"{manifest['tasks']} tasks from {manifest['candidates']} candidates in "
                  f"{manifest['build_seconds']:.1f} s (cache: {manifest['cache']['hits']} hits); "
                  f"content {manifest['content_hash'][:19]}…")


@app.command()
def grade(
    dataset: Path = typer.Argument(..., help="Dataset directory (or tasks.jsonl)."),
    answers: Path = typer.Option(..., "--answers", help='JSONL of {"id": ..., "response": "<raw model text>"}.'),
    out: Optional[Path] = typer.Option(None, "-o", "--out", help="Write one result line per task here."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as one JSON object on stdout."),
) -> None:
    """Grade raw model responses against a dataset (model text is parsed, never executed)."""
    from execbench.dataset import DatasetError, read_tasks
    from execbench.families.grade import grade_tasks, read_answers, result_record, summarize

    try:
        responses = read_answers(answers)
        results = list(grade_tasks(read_tasks(dataset), responses))
    except (DatasetError, OSError) as exc:
        _fail(str(exc))
    known = {task.id for task, _ in results}
    unknown = [key for key in responses if key not in known]
    if unknown:
        console.print(f"[yellow]warning:[/] {len(unknown)} answers name no task of the dataset, e.g. {unknown[0]!r}")
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        with open(out, "w", encoding="utf-8") as fh:
            for task, score in results:
                fh.write(json.dumps(result_record(task, score), ensure_ascii=False) + "\n")
    summary = summarize(results)
    if as_json:
        typer.echo(json.dumps(summary, sort_keys=True))
        return
    table = Table(title=f"{dataset}")
    table.add_column("family")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for family, metrics in summary["families"].items():
        for key, value in metrics.items():
            table.add_row(family, key, f"{value:.4f}" if isinstance(value, float) else str(value))
    Console().print(table)


def _not_yet(name: str) -> None:
    console.print(f"`execbench {name}` is not yet available in this version.")
    raise typer.Exit(1)


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def eval(ctx: typer.Context) -> None:  # noqa: A001 - the command's name
    """Evaluate a model on a dataset through Inspect AI."""
    _not_yet("eval")


@app.command()
def report(ctx: typer.Context) -> None:
    """Write an HTML report from evaluation logs."""
    _not_yet("report")


@app.command()
def demo() -> None:
    """Build a small mixed dataset, evaluate the default local model on it, summarise."""
    _not_yet("demo")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
