"""``execbench eval``: run an Inspect eval set on a dataset, starting the local model if asked.

The run is an Inspect *eval set* in ``log_dir``: rerunning the same command after an
interruption (Ctrl-C, crash, failed requests) only runs the samples that have no result
yet, and the response cache (``$INSPECT_CACHE_DIR``) makes repeated requests free.
Defaults: temperature 0 (the task's), failed samples retried once in place, errored
samples scored as ``response_status="error"`` (they count as wrong in C/N, not in C/R).
Without ``--max-tokens`` a local model's samples each get the budget their answer needs
(``protocol.answer_budget``; at least 512 tokens for a variant that reasons first), so no
answer is cut off by construction; a ``--max-tokens`` the user gives holds as given.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from execbench.eval import protocol
from execbench.eval.summary import Summary

if TYPE_CHECKING:  # the server module loads only for a local model
    from execbench.models.server import ServerDescription
from execbench.models import names as models
from execbench.models.names import LocalModel, ReplayModel

LOCAL_MAX_TOKENS = 512  # the local model's default budget to reason in (small models ramble)
LOCAL_PARALLEL = 2  # llama.cpp slots (= Inspect connections) for the local model by default
LOCAL_MAX_RETRIES = 2  # the in-process server does not come back by waiting
LOCAL_TIMEOUT = 900  # seconds per request, retries included
REPLAY_CONNECTIONS = 64  # a replay sends nothing: samples run as fast as Inspect scores them


@dataclass
class EvalRequest:
    dataset: Path
    model: str = models.LOCAL
    mode: str | None = None
    variant: str | None = None
    limit: int | None = None
    epochs: int | None = None
    max_connections: int | None = None
    log_dir: Path | None = None
    cache: bool = True
    extra: list[str] = field(default_factory=list)  # Inspect flags passed through
    defaults: dict[str, Any] = field(default_factory=dict)  # eval_set keywords the caller prefers (flags win)


@dataclass
class EvalOutcome:
    success: bool
    log_dir: Path
    logs: list[str]
    summaries: list[Summary]
    seconds: float
    server: ServerDescription | None = None  # the local llama.cpp server's record, if one ran
    replay: dict[str, Any] | None = None  # a replay file's record (file, replies, missing), if one was played


def default_log_dir(dataset: Path) -> Path:
    base = Path(os.environ.get("INSPECT_LOG_DIR") or "logs")
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", (dataset if dataset.is_dir() else dataset.parent).name) or "dataset"
    return base / name


def prepare(request: EvalRequest) -> tuple[list[Any], str, models.LocalModel | models.RemoteModel | ReplayModel]:
    """Fast checks before Inspect is imported: dataset, families, variant, model."""
    tasks = protocol.load_tasks(request.dataset.expanduser())
    variant = protocol.resolve_variant(request.mode, request.variant, (t.family for t in tasks))
    model = models.resolve(request.model)
    return tasks, variant, model


def replay_record(model: ReplayModel, tasks: list[Any]) -> dict[str, Any]:
    """Read and check a replay file against the dataset (ReplayError on a bad file or a foreign id):
    the record the run's metadata keeps (``execbench_run.replay``)."""
    from execbench.eval.replay import read_replies

    replies = read_replies(model.path)
    missing = replies.check_ids(task.id for task in tasks)
    return {"file": model.path.name, "sha256": replies.sha256, "replies": len(replies.replies),
            "tasks": len(tasks), "missing": len(missing), "missing_ids": missing[:20]}


def _check_provider(name: str, kwargs: dict[str, Any]) -> None:
    """Create the model once before the eval set: a missing key or unknown provider is a usage error."""
    from inspect_ai.model import get_model

    try:
        get_model(name, base_url=kwargs.get("model_base_url"), **kwargs.get("model_args", {}))
    except Exception as exc:
        if type(exc).__name__ == "PrerequisiteError" or isinstance(exc, (ValueError, ImportError)):
            from rich.text import Text

            raise models.ModelError(f"model {name!r}: {Text.from_markup(str(exc)).plain}") from None
        raise


def _answer_budget(request: EvalRequest, kwargs: dict[str, Any], local: bool, variant: str, tasks: list[Any],
                   say: Callable[[str], None]) -> int | None:
    """The task's ``answer_budget``. A ``--max-tokens`` the user set holds as given (if it cannot fit
    some answers, say so: they will show as truncated). Without one, a local model gets what each
    answer needs (small models ramble until the budget ends), at least :data:`LOCAL_MAX_TOKENS` for
    a variant that reasons first (per turn for the agent); a remote model keeps its provider's default."""
    chosen = kwargs.get("max_tokens")
    if isinstance(chosen, int):
        short = [budget for task in tasks if (budget := protocol.answer_budget(task)) > chosen]
        if short:
            say(f"note: --max-tokens {chosen} is less than {len(short)} of the {len(tasks)} answers need (up to "
                f"{max(short)} tokens): those will be cut off and reported as truncated")
        return None
    if not local or chosen is not None:
        return None
    if request.mode == "agent":
        kwargs["max_tokens"] = LOCAL_MAX_TOKENS
        return None
    return 0 if variant == "direct" else LOCAL_MAX_TOKENS


def run_eval(request: EvalRequest, *, status: Callable[[str], None] | None = None) -> EvalOutcome:
    """Run (or resume) the eval set; raises EvalSetupError/ModelError/PassthroughError on bad input."""
    say = status or (lambda message: None)
    started = time.perf_counter()
    dataset = request.dataset.expanduser().resolve()
    tasks, variant, model = prepare(request)
    families_present = sorted({task.family for task in tasks})

    from execbench.eval import passthrough  # imports Inspect from here on

    options = passthrough.parse(request.extra)
    kwargs: dict[str, Any] = {"retry_attempts": 2, "retry_on_error": 1, "log_dir_allow_dirty": True,
                              **request.defaults}
    kwargs.update(options.as_kwargs())
    if request.limit is not None:
        kwargs["limit"] = request.limit
    if request.epochs is not None:
        kwargs["epochs"] = request.epochs
    log_dir = (request.log_dir or default_log_dir(dataset)).expanduser().resolve()
    local = isinstance(model, LocalModel)
    replay = replay_record(model, tasks) if isinstance(model, ReplayModel) else None
    connections = request.max_connections or (LOCAL_PARALLEL if local else REPLAY_CONNECTIONS if replay else None)
    if connections is not None:
        kwargs["max_connections"] = connections
    if local:
        kwargs.setdefault("max_retries", LOCAL_MAX_RETRIES)
        kwargs.setdefault("timeout", LOCAL_TIMEOUT)
    answer_budget = _answer_budget(request, kwargs, local, variant, tasks, say)
    run_meta: dict[str, Any] = {"mode": request.mode, "variant": variant, "model": request.model}
    cache = request.cache
    if isinstance(model, ReplayModel) and replay is not None:  # the file is the answer: no cached replies
        import execbench.eval.replay_model  # noqa: F401 - registers the provider

        cache = False
        run_meta["replay"] = replay
        # the hash keys Inspect's model memo too: an edited file is never answered from a stale instance
        kwargs["model_args"] = {**kwargs.get("model_args", {}), "file": str(model.path), "sha256": replay["sha256"]}
        kwargs.setdefault("log_realtime", False)
    kwargs["metadata"] = {**kwargs.get("metadata", {}), "execbench_run": run_meta}

    from inspect_ai import eval_set

    if not local:
        _check_provider(model.inspect_name, kwargs)

    from execbench.eval._registry import task_for

    family = families_present[0] if len(families_present) == 1 else None
    task = task_for(family)(dataset=str(dataset), variant=variant, mode=request.mode, cache=cache,
                            answer_budget=answer_budget, **({"replay": replay["sha256"][:16]} if replay else {}))

    def run(model_name: str) -> tuple[bool, list[Any]]:
        say(f"evaluating {len(tasks)} tasks ({', '.join(families_present)}, variant {variant}) "
            f"with {model_name}; logs in {log_dir}")
        return eval_set(tasks=[task], log_dir=str(log_dir), model=model_name, **kwargs)

    server_info = None
    if isinstance(model, LocalModel):
        from execbench.models.server import LocalServer

        say(f"starting llama.cpp on {model.path.name} ({model.size / 1e6:.0f} MB, "
            f"{connections} slots)…")
        with LocalServer(model, parallel=connections or LOCAL_PARALLEL) as server:
            server_info = server.describe()
            run_meta["local_model"] = server_info
            say(f"llama.cpp ready at {server.address} in {server.startup_seconds:.1f} s "
                f"({server.threads} threads)")
            with server.environment():
                success, logs = run(model.inspect_name)
    else:
        success, logs = run(model.inspect_name)

    from execbench.eval.summary import summarize_paths

    if not logs or any(log.status == "cancelled" for log in logs):
        raise KeyboardInterrupt  # Inspect returns no logs when the user cancelled the eval set
    paths = [str(log.location) for log in logs]
    return EvalOutcome(success=bool(success), log_dir=log_dir, logs=paths, summaries=summarize_paths(paths),
                       seconds=time.perf_counter() - started, server=server_info, replay=replay)
