"""The ``execbench`` command line: build, grade, eval, report, demo, models."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, Optional

import typer
import typer.core
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from execbench import __version__, familyhelp
from execbench.progress import LoggedProgress
from execbench.usererror import INTERRUPTED, REPORT_BUGS, UserError

if TYPE_CHECKING:
    from execbench.dataset import Manifest

# the click exceptions typer raises: its own vendored click in newer typer (typer.core._click), else click's
clickx: Any = (vars(typer.core).get("_click") or vars(typer.core)["click"]).exceptions
_NO_ARGS: Any = getattr(clickx, "NoArgsIsHelpError", ())  # `execbench` alone: the help, as before

_SOURCES_HELP = familyhelp.sources()  # the built-in families' sources (no family imported)
INTERNAL_ERROR = 70  # EX_SOFTWARE: a bug in execbench, never the user's input


class _Commands(typer.core.TyperGroup):
    """Every command's errors mapped once (issue 34): a :class:`UserError` (or an OS error on a
    path the user gave) is one ``error:`` line and exit 2; Ctrl-C is one resume advice and exit
    130; anything else is an internal error, said to be one, with where to report it."""

    def main(self, args: Any = None, prog_name: Any = None, complete_var: Any = None,  # type: ignore[override]
             standalone_mode: bool = True, **kwargs: Any) -> Any:
        """Usage errors (a missing argument, an unknown option) in the same one-line form."""
        if not standalone_mode:
            return super().main(args=args, prog_name=prog_name, complete_var=complete_var, standalone_mode=False,
                                **kwargs)
        try:
            code = super().main(args=args, prog_name=prog_name, complete_var=complete_var, standalone_mode=False,
                                **kwargs)
        except _NO_ARGS as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except clickx.ClickException as exc:
            where = f" (see `{exc.ctx.command_path} --help`)" if isinstance(exc, clickx.UsageError) and exc.ctx else ""
            console.print(f"[bold red]error:[/] {escape(exc.format_message())}{where}", soft_wrap=True)
            sys.exit(exc.exit_code)
        except typer.Abort:  # Ctrl-C or end of input at a prompt
            console.print(f"[yellow]{INTERRUPTED}[/]")
            sys.exit(130)
        sys.exit(code if isinstance(code, int) else 0)

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, clickx.ClickException):
            raise
        except KeyboardInterrupt:
            console.print(f"[yellow]{INTERRUPTED}[/]")
            raise typer.Exit(130) from None
        except UserError as exc:  # the user's branch of errors.ExecbenchError: exit 2
            _fail(str(exc))
        except OSError as exc:
            _fail(_said(exc))
        except Exception as exc:  # noqa: BLE001 - an InternalError or any other: the one place that turns a bug into a report
            _internal(exc)


def _note(text: str | None) -> None:
    if text:
        console.print(f"[yellow]warning:[/] {escape(text)}", soft_wrap=True)


def _said(exc: Exception) -> str:
    """An error's message for the user (an OS error as ``PATH: what``, without its errno)."""
    if isinstance(exc, OSError) and exc.filename and exc.strerror:
        return f"{exc.filename}: {exc.strerror}"
    return str(exc)


def _internal(exc: BaseException) -> NoReturn:
    import tempfile
    import traceback

    fd, path = tempfile.mkstemp(prefix="execbench-internal-error-", suffix=".txt")
    with open(fd, "w", encoding="utf-8") as fh:
        fh.write(f"execbench {__version__}: {' '.join(sys.argv)}\n")
        fh.write("".join(traceback.format_exception(exc)))
    console.print(f"[bold red]internal error:[/] {escape(type(exc).__name__)}: {escape(str(exc)[:300])}\n"
                  f"This is a bug in execbench {__version__}, not in your input. Please report it to {REPORT_BUGS} "
                  f"with the command you ran and the traceback saved in {path}.", soft_wrap=True)
    raise typer.Exit(INTERNAL_ERROR)


app = typer.Typer(
    cls=_Commands,
    name="execbench",
    help="Execution-grounded code-reasoning benchmarks: build tasks from real code, evaluate models, explain failures.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console(stderr=True)


def _fail(message: str) -> NoReturn:
    console.print(f"[bold red]error:[/] {escape(message)}", soft_wrap=True)
    raise typer.Exit(2)


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
    released_after: Optional[str] = typer.Option(None, "--released-after", metavar="YYYY-MM-DD", help="A living "
                                                 "benchmark: each package of a list:FILE source at its release "
                                                 "uploaded on or after this day (docs/repo-family.md)."),
    released_before: Optional[str] = typer.Option(None, "--released-before", metavar="YYYY-MM-DD",
                                                  help="... and before this day (default: no upper bound)."),
    new_tests_only: bool = typer.Option(False, "--new-tests-only", help="Keep only the assertions the release "
                                        "before the window did not have (tests a model cannot have seen)."),
) -> None:
    """Build a dataset of tasks whose answers come from running the code."""
    from execbench import registry
    from execbench.dataset import Manifest, check_output_dir
    from execbench.dataset.cache import BuildCache
    from execbench.contract import Annotator, BuildReport, SourceError
    from execbench.contract.options import parse_settings
    from execbench.families.build import build_dataset
    from execbench.families.distributed import ExecutorError, parse_executor

    try:
        plugin = registry.get(family)
    except KeyError as exc:
        _fail(str(exc.args[0]))
    if any(not source.strip() for source in sources):
        _fail("an empty source argument: name a built-in source, a directory or a package")
    window = {"released_after": released_after, "released_before": released_before,
              "new_tests_only": "true" if new_tests_only else None}
    for key, value in window.items():
        if value is not None and key not in plugin.default_options:
            able = [f.name for f in registry.registered() if key in f.default_options]
            _fail(f"--{key.replace('_', '-')}: the {family!r} family has no release window ({', '.join(able)} has)")
    pairs = [f"{key}={value}" for key, value in window.items() if value is not None]
    options = parse_settings([*pairs, *settings], plugin.default_options)
    try:
        parse_executor(executor)
    except ExecutorError as exc:
        _fail(str(exc))
    declared = plugin.capability(Annotator)
    annotate_dataset = declared.annotate() if declared is not None else None
    if annotator is not None and annotate_dataset is None:
        able = [f.name for f in registry.registered() if f.capability(Annotator) is not None]
        _fail(f"--annotator labels {' and '.join(able)} tasks only")
    check_output_dir(out)
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
    built = Manifest.from_json(manifest)  # read typed (issue 36)
    table = Table(title=f"{out}", show_header=True)
    table.add_column("arm")
    table.add_column("tasks", justify="right")
    for arm, count in built.tasks_by_arm.items():
        table.add_row(arm, str(count))
    for stage, count in built.rejected_by_stage.items():
        table.add_row(f"[dim]rejected: {stage}[/]", str(count))
    console.print(table)
    console.print(f"{built.tasks} tasks from {built.extra['candidates']} candidates in "
                  f"{built.extra['build_seconds']:.1f} s (cache: {built.extra['cache']['hits']} hits); "
                  f"content {built.content_hash[:19]}…")
    report = plugin.capability(BuildReport)
    if report is not None and report.summary is not None:
        _print_family_summary(report.summary(built, out))
    if not built.tasks:  # a build that admits nothing is not a success (issue 34)
        console.print(f"[bold yellow]no task admitted[/] from {built.extra['candidates']} candidates; "
                      f"rejections by stage: {escape(_rejections_by_stage(built))}", soft_wrap=True)
        raise typer.Exit(1)
    if annotator is not None:
        _annotate(out, annotator, annotate_dataset)


def _rejections_by_stage(manifest: Manifest) -> str:
    """``stage N (reason ×n, ...)`` per stage of a manifest's rejections, reasons without paths."""
    reasons: dict[str, list[str]] = {}
    for key, count in manifest.rejected_by_reason.items():
        stage, _, reason = key.partition(": ")
        reasons.setdefault(stage, []).append(f"{reason} ×{count}")
    parts = [f"{stage} {count} ({'; '.join(reasons.get(stage, [])[:3])})"
             for stage, count in manifest.rejected_by_stage.items()]
    return ", ".join(parts) or str(manifest.extra.get("zero_tasks_reason") or "no candidates")


def _print_family_summary(blocks: list[Any]) -> None:
    """The family's own tables and lines (``BuildReport.summary``: ``SummaryTable``s and text)."""
    from execbench.contract import SummaryTable

    for block in blocks:
        if not isinstance(block, SummaryTable):
            console.print(escape(str(block)), soft_wrap=True)
            continue
        table = Table(title=escape(block.title))
        for column in block.columns:
            table.add_column(escape(column), justify="right" if column in block.right else "left")
        for row in block.rows:
            table.add_row(*(escape(cell) for cell in row))
        console.print(table)


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
    accept_modified: bool = typer.Option(False, "--accept-modified", help="Use a dataset whose tasks.jsonl was "
                                         "edited after the build (its content hash no longer matches the manifest)."),
) -> None:
    """Grade raw model responses against a dataset (model text is parsed, never executed)."""
    from execbench import registry
    from execbench.dataset import DatasetError, check_output_file, check_unmodified, read_tasks
    from execbench.dataset.answers import read_answer_file, unknown_ids
    from execbench.families.grade import flat_metrics, grade_tasks, result_record, summarize

    if out is not None:
        check_output_file(out, marker='"extracted": ', what="results file (execbench grade -o)")
    try:
        tasks = list(read_tasks(dataset, registry.check_record))
        _note(check_unmodified(dataset, tasks, accept=accept_modified))
        responses, lines = read_answer_file(answers)
        _note(unknown_ids(answers, lines, {task.id for task in tasks}))
        if variant is not None:
            unknown_in = sorted({t.family for t in tasks if variant not in registry.get(t.family).variants})
            if unknown_in:
                _fail(f"family {unknown_in[0]!r} has no variant {variant!r}")
        results = list(grade_tasks(tasks, responses, variant, family_of=registry.get))
    except (DatasetError, OSError) as exc:
        _fail(_said(exc))
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
    accept_modified: bool = typer.Option(False, "--accept-modified", help="Use a dataset whose tasks.jsonl was "
                                         "edited after the build (its content hash no longer matches the manifest)."),
) -> None:
    """Write datasets as a Hugging Face `datasets` folder: Parquet shards per family and arm + a dataset card."""
    from execbench import registry
    from execbench.contract import source_license
    from execbench.dataset import DatasetError, check_unmodified
    from execbench.dataset.export import write_export
    from execbench.dataset.store import read_inputs

    try:
        inputs = read_inputs(datasets, registry.check_record)
        for item in inputs:
            _note(check_unmodified(item.path, item.tasks, accept=accept_modified))
        licenses: dict[str, str | None] = {}
        for task in (task for item in inputs for task in item.tasks):
            parts = registry.parse_id(task.id)
            source = f"{parts.family}/{parts.source}"
            declared = task.provenance.get("license")  # a case directory's own `license`
            if not licenses.get(source) and isinstance(declared, str) and declared.strip():
                licenses[source] = f"{declared.strip()[:100]} (declared by its case directories)"
            if source not in licenses:
                licenses[source] = source_license(registry.get(parts.family), parts.source)
        marker = write_export(inputs, out, licenses={k: v for k, v in licenses.items() if v})
    except (DatasetError, OSError) as exc:
        _fail(_said(exc))
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
    from execbench.dataset import check_output_dir
    from execbench.mutation import cli as mutation_cli

    if offline == (teacher is not None):
        _fail("choose exactly one of --offline and --teacher PROVIDER/MODEL")
    check_output_dir(out)
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
    accept_modified: bool = typer.Option(False, "--accept-modified", help="Use a dataset whose tasks.jsonl was "
                                         "edited after the build (its content hash no longer matches the manifest)."),
) -> None:
    """Evaluate a model on a dataset through Inspect AI (temperature 0; extra Inspect flags pass through)."""
    from execbench.eval.commands import eval_command
    from execbench.eval.run import EvalRequest
    from execbench.dataset import check_unmodified

    _note(check_unmodified(dataset, accept=accept_modified))

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
    from execbench.dataset import check_output_file
    from execbench.report import write_report
    from execbench.report.sections import Options

    if cutoff is not None and not re.fullmatch(r"\d{4}-\d\d-\d\d", cutoff):
        _fail(f"--cutoff {cutoff!r}: expected YYYY-MM-DD")
    check_output_file(out, marker='<meta name="generator" content="execbench', what="report")
    try:
        with console.status("reading logs"):
            logset = read_logs(logs, datasets)
        with console.status(f"analysing {len(logset.samples)} samples"):
            written = write_report(logset, out, title=title,
                                   options=Options(replicates=replicates, permutations=permutations, cutoff=cutoff))
    except (LogReadError, OSError) as exc:
        _fail(_said(exc))
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
    tasks_per_source: int = typer.Option(2, "--tasks-per-source", min=1, help="Tasks kept from each built-in source."),
    max_tokens: Optional[int] = typer.Option(None, "--max-tokens", min=16, help="Answer budget of the local "
                                             "model (default: each task's own, what its answer needs)."),
) -> None:
    """Build a small mixed dataset, evaluate the default local model on it offline, summarise."""
    from execbench.eval.commands import demo_command

    raise typer.Exit(demo_command(console, out, per_source=tasks_per_source, max_tokens=max_tokens,
                                  extra=list(ctx.args)))


def main() -> None:
    app()


if __name__ == "__main__":
    main()
