"""The ``execbench`` command line: build, grade, eval, report, demo, models."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from execbench import __version__, familyhelp
from execbench.progress import LoggedProgress

_SOURCES_HELP = familyhelp.sources()  # the built-in families' sources (no family imported)

app = typer.Typer(
    name="execbench",
    help="Execution-grounded code-reasoning benchmarks: build tasks from real code, evaluate models, explain failures.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console(stderr=True)


def _fail(message: str) -> None:
    console.print(f"[bold red]error:[/] {escape(message)}")
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
        if isinstance(defaults[key], str) and not isinstance(value, str):
            value = raw  # a text option is its text: --set check_seeds=9
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
    family: str = typer.Argument(..., help=f"Task family: {familyhelp.families()}."),
    sources: list[str] = typer.Argument(..., help=_SOURCES_HELP),
    out: Path = typer.Option(..., "-o", "--out", help="Dataset directory to write."),
    jobs: int = typer.Option(2, "--jobs", "-j", min=1, help="Candidates built in parallel."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Build only the first N candidates."),
    settings: list[str] = typer.Option([], "--set", help="Family build option KEY=VALUE (repeatable), e.g. --set repeats=3."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Ignore and do not fill the build cache."),
    executor: str = typer.Option("local", "--executor", help="local (a pool of --jobs here), ray (a new local "
                                 "Ray cluster, or RAY_ADDRESS) or ray:HOST:PORT (a running cluster)."),
    annotator: Optional[str] = typer.Option(None, "--annotator", help="repo: label each task Easy/Medium/Hard "
                                            "with this model (any Inspect model, or local) after the build."),
) -> None:
    """Build a dataset of tasks whose answers come from running the code."""
    from execbench import registry
    from execbench.dataset.cache import BuildCache
    from execbench.contract import SourceError
    from execbench.families.build import build_dataset
    from execbench.families.distributed import ExecutorError, parse_executor

    try:
        plugin = registry.get(family)
    except KeyError as exc:
        _fail(str(exc.args[0]))
    options = _parse_settings(settings, plugin.default_options)
    try:
        parse_executor(executor)
    except ExecutorError as exc:
        _fail(str(exc))
    annotate_dataset = plugin.annotator()
    if annotator is not None and annotate_dataset is None:
        able = [f.name for f in registry.registered() if f.annotator() is not None]
        _fail(f"--annotator labels {' and '.join(able)} tasks only")
    cache = BuildCache(enabled=not no_cache)
    columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("{task.fields[tasks]} tasks, {task.fields[rejected]} rejected"), TimeElapsedColumn())
    with LoggedProgress(*columns, console=console, transient=False) as bar:
        task_bar = bar.add_task(f"build {family}", total=None, tasks=0, rejected=0)

        def progress(done: int, total: int, n_tasks: int, n_rejected: int) -> None:
            bar.update(task_bar, completed=done, total=total, tasks=n_tasks, rejected=n_rejected)

        try:
            manifest = build_dataset(plugin, sources, out, options=options, jobs=jobs, cache=cache,
                                     progress=progress, limit=limit, executor=executor)
        except (SourceError, ExecutorError) as exc:
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
    if manifest.get("zero_tasks_reason"):
        console.print(f"[yellow]no tasks: {manifest['zero_tasks_reason']}[/]")
    if (manifest.get("settings") or {}).get("release_window"):
        _print_release_window(manifest, out)
    if annotator is not None:
        _annotate(out, annotator, annotate_dataset)


def _print_release_window(manifest: dict[str, Any], out: Path) -> None:
    """Per package of a release window: the release chosen and how many tasks survive."""
    from execbench.dataset.store import PINNED_LIST

    window = manifest["settings"]["release_window"]
    counts = manifest.get("tasks_by_release") or {}
    table = Table(title=f"releases in [{window.get('released_after') or '…'}, {window.get('released_before') or '…'})")
    for column in ("package", "release", "uploaded", "tasks", "existed before", "previous"):
        table.add_column(column, justify="right" if column in ("tasks", "existed before") else "left")
    for name, release in window.get("packages", {}).items():
        if "version" not in release:
            table.add_row(name, "[dim]none[/]", "", "", "", escape(release.get("rejected", ""))[:60])
            continue
        row = counts.get(f"{release['name']}=={release['version']}", {})
        previous = release.get("previous") or {}
        table.add_row(name, release["version"], release["date"], str(row.get("tasks", 0)),
                      str(row.get("new-tests-only", 0)), previous.get("version", "-"))
    console.print(table)
    console.print(f"pinned versions for a rebuild: {out / PINNED_LIST}")


def _annotate(out: Path, annotator: str, annotate_dataset: Any) -> None:
    from execbench.models.names import ModelError
    from execbench.models.server import ServerError

    columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with LoggedProgress(*columns, console=console, transient=False) as bar:
        task_bar = bar.add_task(f"difficulty labels ({annotator})", total=None)
        try:
            manifest = annotate_dataset(out, annotator, progress=lambda done, total: bar.update(
                task_bar, completed=done, total=total))
        except (ModelError, ServerError, ValueError) as exc:
            _fail(f"annotation: {exc}")
    note = manifest["annotation"]
    labels = ", ".join(f"{label} {count}" for label, count in note["labels"].items())
    console.print(f"labels: {labels} in {note['seconds']:.1f} s"
                  + (f"; {note['errors']} failed requests, first: {note['first_error']}" if note["errors"] else ""))


@app.command()
def grade(
    dataset: Path = typer.Argument(..., help="Dataset directory (or tasks.jsonl)."),
    answers: Path = typer.Option(..., "--answers", help='JSONL of {"id": ..., "response": "<raw model text>"}.'),
    out: Optional[Path] = typer.Option(None, "-o", "--out", help="Write one result line per task here."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as one JSON object on stdout."),
    variant: Optional[str] = typer.Option(None, "--variant", help="Grade as this prompt variant scores "
                                          f"({familyhelp.paper_scoring()}: a peer benchmark's own rules)."),
) -> None:
    """Grade raw model responses against a dataset (model text is parsed, never executed)."""
    from execbench import registry
    from execbench.dataset import DatasetError, read_tasks
    from execbench.families.grade import flat_metrics, grade_tasks, read_answers, result_record, summarize

    try:
        responses = read_answers(answers)
        tasks = list(read_tasks(dataset))
        if variant is not None:
            unknown_in = sorted({t.family for t in tasks if variant not in registry.get(t.family).variants})
            if unknown_in:
                _fail(f"family {unknown_in[0]!r} has no variant {variant!r}")
        results = list(grade_tasks(tasks, responses, variant, family_of=registry.get))
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
    summary = summarize(results, variant, family_of=registry.get)
    if as_json:
        typer.echo(json.dumps(summary, sort_keys=True))
        return
    table = Table(title=f"{dataset}" + (f" · variant {variant}" if variant else ""))
    table.add_column("family")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for family, metrics in summary["families"].items():
        for key, value in flat_metrics(metrics):
            table.add_row(family, key, f"{value:.4f}" if isinstance(value, float) else str(value))
    Console().print(table)


@app.command()
def export(
    datasets: list[Path] = typer.Argument(..., help="Dataset directories to export together."),
    out: Path = typer.Option(..., "-o", "--out", help="The export folder (replaced when complete)."),
) -> None:
    """Write datasets as a Hugging Face `datasets` folder: Parquet shards per family and arm + a dataset card."""
    from execbench import registry
    from execbench.dataset import DatasetError
    from execbench.dataset.export import write_export
    from execbench.dataset.store import read_inputs

    try:
        inputs = read_inputs(datasets)
        licenses = {}
        for task in (task for item in inputs for task in item.tasks):
            parts = registry.parse_id(task.id)
            source = f"{parts.family}/{parts.source}"
            if source not in licenses:
                licenses[source] = registry.get(parts.family).source_license(parts.source)
        marker = write_export(inputs, out, licenses={k: v for k, v in licenses.items() if v})
    except (DatasetError, OSError) as exc:
        _fail(str(exc))
    table = Table(title=str(out))
    table.add_column("config")
    table.add_column("rows", justify="right")
    table.add_column("JSON text columns")
    for name, config in sorted(marker["configs"].items()):
        table.add_row(name, str(config["rows"]), ", ".join(config["json_columns"]) or "-")
    console.print(table)
    console.print(f"{marker['tasks']} tasks; content {marker['content_hash'][:19]}… (read back and verified)")


@app.command()
def mutate(
    dataset: Path = typer.Argument(..., help="Original dataset directory."),
    out: Path = typer.Option(..., "-o", "--out", help="Directory for the mutated twin dataset."),
    offline: bool = typer.Option(False, "--offline", help="Seeded AST mutations, no model (every family)."),
    teacher: Optional[str] = typer.Option(None, "--teacher", help="Teacher model for LLM mutation of repo tasks: "
                                          "'local', 'local/PATH.gguf' or any Inspect model (provider/model)."),
    seed: int = typer.Option(0, "--seed", help="Mutation seed."),
    attempts: Optional[int] = typer.Option(None, "--attempts", min=1,
                                           help="Offline: builds per program (default 4); teacher: calls per stage (default 3)."),
    ops: str = typer.Option(",".join(("rename", "literals", "strip-comments", "inputs")), "--ops",
                            help="Offline operators, comma-separated: rename, literals, strip-comments, inputs."),
    drop_unchanged: bool = typer.Option(False, "--drop-unchanged", help="Offline: leave out mutants whose answer "
                                        "equals the original's (kept and flagged by default)."),
    jobs: int = typer.Option(2, "--jobs", "-j", min=1, help="Programs (offline) or test functions (teacher) in parallel."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Mutate only the first N programs / test modules."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Ignore and do not fill the build cache."),
) -> None:
    """Turn a dataset into an unmemorised twin whose answers are regenerated by execution."""
    from execbench import registry
    from execbench.mutation import cli as mutation_cli

    if offline == (teacher is not None):
        _fail("choose exactly one of --offline and --teacher PROVIDER/MODEL")
    try:
        manifest = mutation_cli.run(dataset, out, offline=offline, teacher=teacher, seed=seed, attempts=attempts,
                                    ops=ops, drop_unchanged=drop_unchanged, jobs=jobs, limit=limit,
                                    no_cache=no_cache, console=console, plugins=list(registry.registered()))
    except mutation_cli.USER_ERRORS as exc:
        _fail(str(exc))
    mutation_cli.print_summary(manifest, out, console)


def _not_yet(name: str) -> None:
    console.print(f"`execbench {name}` is not yet available in this version.")
    raise typer.Exit(1)


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def eval(  # the command's name (shadows the builtin in this module only)
    ctx: typer.Context,
    dataset: Path = typer.Argument(..., help="Dataset directory (or tasks.jsonl)."),
    model: str = typer.Option("local", "--model", "-m", help="`local` (offline SmolLM2), `local/PATH.gguf`, "
                              "`replay/FILE.jsonl` (recorded replies), or an Inspect model such as openai/gpt-4o or openai-api/<service>/<model>; see `execbench models`."),
    mode: Optional[str] = typer.Option(None, "--mode", help="direct | cot | agent (agent: repo tasks only)."),
    variant: Optional[str] = typer.Option(None, "--variant", help="Any prompt variant of the dataset's families "
                                          f"({familyhelp.variants()}); wins over --mode."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Evaluate only the first N tasks."),
    epochs: Optional[int] = typer.Option(None, "--epochs", min=1, help="Ask every task K times."),
    max_connections: Optional[int] = typer.Option(None, "--max-connections", min=1,
                                                  help="Concurrent requests (local model: server slots, default 2)."),
    log_dir: Optional[Path] = typer.Option(None, "--log-dir", help="Eval-set log directory (default: logs/<dataset>); "
                                           "rerunning into it resumes."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not read or write the response cache."),
) -> None:
    """Evaluate a model on a dataset through Inspect AI (temperature 0; extra Inspect flags pass through)."""
    from execbench.eval.commands import eval_command
    from execbench.eval.run import EvalRequest

    request = EvalRequest(dataset=dataset, model=model, mode=mode, variant=variant, limit=limit, epochs=epochs,
                          max_connections=max_connections, log_dir=log_dir, cache=not no_cache, extra=list(ctx.args))
    raise typer.Exit(eval_command(console, request))


@app.command()
def models(as_json: bool = typer.Option(False, "--json", help="Print the list as JSON on stdout.")) -> None:
    """List the models `execbench eval --model` can use here (offline local models first)."""
    from execbench.eval.commands import models_command

    raise typer.Exit(models_command(console, as_json=as_json))


@app.command()
def report(
    logs: list[Path] = typer.Argument(..., help="Inspect log files or directories of logs (one or many models)."),
    out: Path = typer.Option(Path("report.html"), "-o", "--out",
                             help="HTML file to write; the per-sample table goes beside it (.samples.csv/.parquet)."),
    datasets: list[Path] = typer.Option([], "--dataset", help="Dataset directory to join by task id when the path "
                                        "recorded in the logs is gone (program texts, provenance). Repeatable."),
    title: str = typer.Option("execbench report", "--title", help="Page title."),
    replicates: int = typer.Option(10_000, "--replicates", min=200, help="Source-clustered bootstrap replicates."),
    permutations: int = typer.Option(10_000, "--permutations", min=200, help="Mann-Whitney permutation shuffles."),
    cutoff: Optional[str] = typer.Option(None, "--cutoff", help="Tasks with release dates: accuracy before vs "
                                         "after this day (YYYY-MM-DD; default: the model's cutoff if Inspect knows it)."),
) -> None:
    """Write a self-contained HTML report (tables, plots, statistics) from evaluation logs."""
    import re

    from execbench.analysis.logs import LogReadError, read_logs
    from execbench.report import write_report
    from execbench.report.sections import Options

    if cutoff is not None and not re.fullmatch(r"\d{4}-\d\d-\d\d", cutoff):
        _fail(f"--cutoff {cutoff!r}: expected YYYY-MM-DD")
    try:
        with console.status("reading logs"):
            logset = read_logs(logs, datasets)
        with console.status(f"analysing {len(logset.samples)} samples"):
            written = write_report(logset, out, title=title,
                                   options=Options(replicates=replicates, permutations=permutations, cutoff=cutoff))
    except (LogReadError, OSError) as exc:
        _fail(str(exc))
    for line in written.headlines:
        console.print(f"• {re.sub(r'<[^>]+>', '', line)}", highlight=False)
    for note in written.notes:
        console.print(f"[yellow]note:[/] {note}", highlight=False)
    tables = ", ".join(str(p) for p in (written.csv, written.parquet) if p is not None)
    console.print(f"wrote {written.html} (per-sample table: {tables})")


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def demo(
    ctx: typer.Context,
    out: Path = typer.Option(Path("execbench-demo"), "--out", "-o", help="Directory for the dataset and the logs."),
    tasks_per_source: int = typer.Option(3, "--tasks-per-source", min=1, help="Tasks kept from each built-in source."),
    max_tokens: int = typer.Option(128, "--max-tokens", min=16, help="Answer budget of the local model."),
) -> None:
    """Build a small mixed dataset, evaluate the default local model on it offline, summarise."""
    from execbench.eval.commands import demo_command

    raise typer.Exit(demo_command(console, out, per_source=tasks_per_source, max_tokens=max_tokens,
                                  extra=list(ctx.args)))


def main() -> None:
    app()


if __name__ == "__main__":
    main()
