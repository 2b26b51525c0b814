"""Building candidates on a Ray cluster (``execbench build ... --executor ray[:ADDRESS]``).

The driver (the ``execbench build`` process) lists the candidates, answers what it can
from its build cache, and sends the rest to Ray as tasks; each task runs the family's
``build_candidate`` on a worker, in the worker's own sandbox, with the worker node's own
caches (sdists, venvs). Outcomes stream back in completion order; the build engine writes
them in candidate order with the usual writer and cache, so the dataset is byte-identical
to a local build.

Candidates must be self-contained: the trace, state and cruxeval families' are (program
text in the payload), and so are a repo build's ``list:FILE`` candidates (each package is
downloaded and installed on the worker that builds it). Other repo sources are prepared
on the driver and their candidates name its cache: on a multi-node cluster a worker
without that cache rejects them (``source``), so use a package list there.

A cluster that execbench starts itself uses token authentication with a random token
kept in the build's environment (never ``~/.ray``); a running cluster is reached with
whatever its operator configured (``RAY_AUTH_TOKEN`` / ``RAY_AUTH_TOKEN_PATH``).

A worker that dies mid-candidate costs that candidate one retry (Ray's ``max_retries``);
if the retry dies too the candidate is rejected with reason ``worker_lost``. Exceptions
raised by the family itself are not retried: they fail the build as they do locally.

Ray is an optional dependency (``pip install 'execbench[ray]'``), imported only here.
"""

from __future__ import annotations

import os
import secrets
from typing import Any, Iterator

from execbench.contract import Candidate, Family, Outcome, SourceError
from execbench.usererror import UserError

TASK_NAME_PREFIX = "execbench-build:"  # Ray task names (and worker process titles)


class ExecutorError(UserError):
    """The executor specification is wrong or Ray cannot be reached."""


def parse_executor(spec: str) -> tuple[str, str | None]:
    """``local`` -> ("local", None); ``ray`` -> ("ray", None); ``ray:HOST:PORT`` -> ("ray", "HOST:PORT")."""
    if spec == "local":
        return "local", None
    if spec == "ray":
        return "ray", None
    if spec.startswith("ray:") and len(spec) > 4:
        return "ray", spec[4:]
    raise ExecutorError(f"unknown executor {spec!r}: use local, ray or ray:ADDRESS")


def run_candidate(family: Family, candidate: Candidate, options: dict[str, Any]) -> Outcome:
    """One candidate's outcome; a :class:`SourceError` is a rejection, as in a local build."""
    try:
        return family.build_candidate(candidate, options)
    except SourceError as exc:
        outcome = Outcome()
        outcome.reject(candidate.key, "source", str(exc))
        return outcome


def _build_on_worker(family: Family, key: str, payload: dict[str, Any], options: dict[str, Any]) -> dict:
    """A worker's candidate: the plug-in is handed over (pickled), not looked up by name."""
    outcome = run_candidate(family, Candidate(key, payload), options)
    return {"tasks": outcome.tasks, "rejected": outcome.rejected}


class RayBuild:
    """A connection to a cluster for one build: ``address`` names a running cluster (or
    ``RAY_ADDRESS`` does); without either, a local cluster with ``jobs`` CPUs is started
    and stopped with the build."""

    def __init__(self, address: str | None, jobs: int) -> None:
        try:
            import ray
        except ImportError:
            raise ExecutorError("--executor ray needs Ray: pip install 'execbench[ray]'") from None
        self.ray = ray
        self.saved_env: dict[str, str | None] = {}
        kwargs: dict[str, Any] = {"logging_level": "ERROR", "log_to_driver": False}
        try:
            if address or os.environ.get("RAY_ADDRESS"):
                ray.init(address=address or os.environ["RAY_ADDRESS"], **kwargs)
            else:
                # A cluster of our own: token authentication with a token that lives only in
                # this process's environment (Ray would otherwise write ~/.ray/auth_token).
                # (ray.init turns token mode on by itself and sets RAY_AUTH_MODE: restored on close)
                if not {"RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"} & set(os.environ):
                    self.saved_env["RAY_AUTH_MODE"] = None
                    self._set_env(RAY_AUTH_TOKEN=secrets.token_hex(32))
                ray.init(num_cpus=max(1, jobs), include_dashboard=False, **kwargs)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            self.close()
            where = address or os.environ.get("RAY_ADDRESS") or "a new local one"
            raise ExecutorError(f"cannot reach a Ray cluster at {where}: {exc}") from None
        self.remote = ray.remote(max_retries=1, retry_exceptions=False)(_build_on_worker)

    def outcomes(self, family: Family, candidates: list[tuple[int, Candidate]], options: dict[str, Any],
                 ) -> Iterator[tuple[int, Outcome, bool]]:
        """(index, outcome, completed) per candidate as they finish; ``completed`` is False
        for a candidate lost with its worker (do not cache it)."""
        ray = self.ray
        pending = {}
        plugin = ray.put(family)  # once per build; each task receives the plug-in itself
        for index, candidate in candidates:
            ref = self.remote.options(name=f"{TASK_NAME_PREFIX}{candidate.key}"[:200]).remote(
                plugin, candidate.key, candidate.payload, options)
            pending[ref] = (index, candidate)
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                index, candidate = pending.pop(ref)
                try:
                    result = ray.get(ref)
                except ray.exceptions.RayTaskError as exc:  # the family raised: as in a local build
                    raise exc.as_instanceof_cause() from None
                except ray.exceptions.RayError as exc:  # the worker (or its node) died, twice
                    outcome = Outcome()
                    outcome.reject(candidate.key, "execution", "worker_lost",
                                   detail=f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}")
                    yield index, outcome, False
                    continue
                yield index, Outcome(**result), True

    def _set_env(self, **values: str) -> None:
        for name, value in values.items():
            self.saved_env.setdefault(name, os.environ.get(name))
            os.environ[name] = value

    def close(self) -> None:
        if self.ray.is_initialized():
            self.ray.shutdown()
        for name, value in self.saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        self.saved_env.clear()
