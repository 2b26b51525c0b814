"""Building repo tasks: repository → test modules → traced, probed, verified assertions.

One candidate is one test module of one repository. :func:`build_test_file` is the whole
path from a test module's *text* to tasks, so the mutation engine can hand it a mutated
text for the same path and get tasks through the same tracing / DVP / masking / verify
path. Per module it runs the tests ``repeats`` times (default 2) in the sandbox:

1. trace + probe (the key run, hash seed 0): every compared operand is wrapped in a probe
   that records its value; each test call runs under the depth-3 tracer (test function =
   depth 0); its values are the answers;
2. verify (only tests with pending assertions; ``repeats - 1`` runs, one job each in one
   sandbox, under the build's check seeds: drawn at random per build, or pinned with
   ``--set check_seeds=N``, :mod:`execbench.contract.hashseeds`): each pending assertion is
   rewritten so its actual operand is evaluated once and every candidate answer is checked
   by the original assertion with the answer substituted for the masked operand. A value
   that differs from the key run's under any check seed is ``unstable_value``; a candidate
   answer must pass in every verification run. A module gets at least
   :data:`hashseeds.MIN_CHECKS` (5) verification runs: ``repeats - 1`` plus the build's extra
   check seeds (:func:`hashseeds.extra`; issue 33), so a value that follows a coin flip of
   set order passes 1 time in 32 (1 in 2 with one run).

The check seeds are not in the task records (a record must not vary per build): the
provenance says ``key_hash_seed`` (0) and ``repeats``; the manifest's ``settings.hash_seeds``
names the seeds, as for the trace, cruxeval and state families.

Rejection stages: ``source``, ``execution`` (test failed / skipped / timed out / trace over
the caps / assertion not reached), ``selection`` (complexity score below the threshold,
parametrised-instance cap), ``dvp-semantic`` (funnel 1), ``dvp-morphology`` (funnel 2),
``verification`` (no candidate answer made the assertion pass when substituted).

Each task's trace is stored by :mod:`.traces` and its slicing metrics come from
:mod:`.slicing_metrics`.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import sys
from collections import defaultdict
import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence, TypedDict

from execbench.dataset import make_id
from execbench.dataset.cache import cache_dir
from execbench.contract import Candidate, Outcome, SourceError, hashseeds
from execbench.contract.jsontypes import JSONObject, JSONValue
from execbench.families.repo import assertions as A
from execbench.families.repo import agent_copy, balance, context, dvp, leaks, packages, static_eval, touched
from execbench.families.repo.records import (AnswerCandidate, Item, Module, Pending, RejectionBase, RepoOptions,
                                             RepoPayload, RepoPromptFields, SliceTarget, TestFilePayload)
from execbench.families.repo.runner import PytestReport, pytest_job, run_many, run_tests
from execbench.families.repo.slicing_metrics import fill_metrics, slice_cache, slice_for, slice_provenance
from execbench.families.repo.traces import TraceStore
from execbench.sources import repos
from execbench.sources.repos import Repo, RepoConfig

if TYPE_CHECKING:  # the plug-in imports pytest: the parent never loads it
    from execbench.families.repo._plugin import CallJson, RenderedValue, TestRecord, TraceSummary
    from execbench.families.repo.slicing_metrics import SliceProvenance, SliceResult

DEFAULT_OPTIONS: RepoOptions = {
    "threshold": 0.30,  # RepoReason §3.4: Score >= 0.30
    "max_depth": 3,  # test function = depth 0
    "max_calls": 1000,  # per-test caps: a test over any cap is rejected, not truncated
    "max_line_events": 100_000,
    "max_summary_bytes": 2_000_000,
    "test_timeout": 60,  # seconds per test
    "file_timeout": 1200,  # seconds per test module run
    "max_instances": 4,  # parametrised / inherited instances of one test function
    "full": False,  # default corpus: run every test module of sympy and networkx
    "max_modules_per_package": 0,  # test modules built per package, every source (0: all)
    "max_tasks_per_package": 0,  # tasks kept per package, every source (0: all)
    "max_tasks_per_function": 10,  # tasks kept per test function, first in assertion order (0: all; balance.py)
    "data_table_tasks": "exclude",  # tasks whose answer is an entry of a library data table: exclude | keep
    "context_budget": 2000,  # tokens (~4 characters each) of test-file definitions a prompt may carry
    "assertion_threshold": 0.30,  # the same Score over the assertion's own dynamic slice
    "trivial_lines": 2,  # trivial: a plain read of at most this many plain library lines, no deeper call
    "released_after": "",  # list:FILE sources: releases uploaded on or after this day (YYYY-MM-DD) ...
    "released_before": "",  # ... and before this day (packages.py, docs/repo-family.md "A living benchmark")
    "new_tests_only": False,  # keep only assertions the release before the window did not have (novelty.py)
    "repeats": 2,  # runs per module: the probe run (hash seed 0) + repeats - 1 verification runs (check seeds)
    "check_seeds": "",  # "": drawn at random per build; "5,9": pinned (contract/hashseeds.py)
}
_HINT_TYPES = {"int", "float", "complex", "str", "bytes", "bool", "NoneType", "list", "tuple", "dict", "set",
               "frozenset"}


# --- candidates ---------------------------------------------------------------------------

def repo_payload(repo: Repo) -> RepoPayload:
    c = repo.config
    payload: RepoPayload = {
        "spec": repo.spec, "name": repo.name, "version": repo.version, "root": str(repo.root),
        "import_root": str(repo.import_root), "packages": list(repo.packages), "python": str(repo.python),
        "tree_sha256": repo.tree_sha256, "sdist_sha256": repo.sdist_sha256,
        "config": {"test_deps": list(c.test_deps), "env": dict(c.env), "test_modules": list(c.test_modules),
                   "exclude": list(c.exclude), "note": c.note}}
    if repo.content_sha256:  # a local checkout: the build cache is keyed by every file of it
        payload["content_sha256"] = repo.content_sha256
    return payload


def repo_from_payload(p: RepoPayload) -> Repo:
    c = p["config"]
    config = RepoConfig(p["name"], p["version"], tuple(c["test_deps"]), dict(c["env"]), tuple(c["test_modules"]),
                        tuple(c["exclude"]), c.get("note", ""))
    return Repo(spec=p["spec"], name=p["name"], version=p["version"], root=Path(p["root"]),
                import_root=Path(p["import_root"]), packages=tuple(p["packages"]), python=Path(p["python"]),
                config=config, tree_sha256=p["tree_sha256"], sdist_sha256=p.get("sdist_sha256"),
                content_sha256=p.get("content_sha256"))


# The test environments of the repositories the last candidates() call prepared, for the
# manifest (RepoFamily.manifest_settings; build_dataset asks for settings after candidates).
PREPARED: dict[str, JSONObject] = {}


def test_environment(repo: Repo) -> JSONObject:
    """What the manifest records of a repository's test environment: the requirements asked
    for, where the repository declares them, and the versions installed (read from the
    venv's dist-info names; nothing runs)."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    from execbench.sources import testdeps

    installed = testdeps.resolved(repo.python)
    wanted = [canonicalize_name(Requirement(d).name) for d in repo.config.test_deps]
    declared: list[JSONValue] = (list(testdeps.declared(repo.root, repo.name).sources)
                                 if repo.name.lower() not in repos.DEFAULT_BY_NAME
                                 else ["execbench default corpus pins"])
    resolved: JSONObject = {name: installed.get(name) for name in wanted}
    return {"test_dependencies": list[JSONValue](repo.config.test_deps), "declared_in": declared,
            "resolved": resolved}


def run_seeds(options: RepoOptions) -> list[int]:
    """The hash seeds of a module's runs: the key run's (0, the probe run) first, then the
    verification runs' check seeds (:func:`hashseeds.of`: the build's resolved ones, else
    pinned or drawn now). A :class:`SourceError` when ``repeats`` leaves no verification run."""
    if int(options.get("repeats", 2)) < 2:
        raise SourceError(f"repeats={options.get('repeats')}: the repo family needs at least 2 "
                          "(the probe run and one verification run)")
    return hashseeds.of({"repeats": 2, **options})


def candidates(sources: list[str], options: RepoOptions) -> Iterator[Candidate]:
    run_seeds(options)  # a bad repeats or check_seeds stops the build before any repository is prepared
    if str(options.get("data_table_tasks", "exclude")) not in ("exclude", "keep"):
        raise SourceError(f"data_table_tasks={options.get('data_table_tasks')!r}: expected exclude or keep")
    PREPARED.clear()
    packages.SELECTED.clear()
    capped = bool(int(options.get("max_modules_per_package") or 0) or int(options.get("max_tasks_per_package") or 0))
    for spec in repos.expand_specs(sources):
        if packages.is_list(spec):  # one candidate per package, prepared where it is built
            yield from packages.list_candidates(spec, options)
            continue
        try:  # any failure is this checkout's rejection (an unprepared candidate), never a stopped build
            repo, test_files = repos.prepared(spec, full=bool(options.get("full")))
        except SourceError as exc:
            label = repos.spec_label(spec)
            yield Candidate(key=f"unprepared/{label}", payload={"unprepared": label, "reason": str(exc)[:2000]})
            continue
        try:
            PREPARED[repo.key] = test_environment(repo)
        except Exception as exc:  # noqa: BLE001 - the manifest note must not stop a build
            PREPARED[repo.key] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
        if capped:  # package caps need the whole package in one candidate, as a list: line is built
            yield Candidate(key=f"package/{repo.key}", payload={"package": spec, "tree_sha256": repo.tree_sha256})
            continue
        payload = repo_payload(repo)
        for path in test_files:
            rel = path.relative_to(repo.root).as_posix()
            test_file: TestFilePayload = {"repo": payload, "test_file": rel}
            yield Candidate(key=f"{repo.key}/{rel}", payload=dict(test_file))


def build_candidate(candidate: Candidate, options: RepoOptions) -> Outcome:
    if "unprepared" in candidate.payload:  # a checkout that could not be prepared (candidates())
        outcome = Outcome()
        outcome.reject(candidate.payload["unprepared"], "package", candidate.payload["reason"])
        return outcome
    if "package" in candidate.payload:
        return packages.build_package(candidate.payload["package"], options, build_test_file,
                                      candidate.payload.get("release"))
    repo = repo_from_payload(candidate.payload["repo"])
    rel = candidate.payload["test_file"]
    path = repo.root / rel
    if not path.is_file():
        raise SourceError(f"{rel} does not exist (was the cache cleared? rebuild the repository)")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SourceError(f"{rel}: cannot read the test module ({type(exc).__name__})") from None
    return build_test_file(repo, rel, text, options)


# --- analysis of the test-side modules ------------------------------------------------------

def _helper_modules(repo: Repo, test_path: Path) -> list[Path]:
    """Non-test modules beside the test file that define test functions (mixins such as
    cachetools' ``tests/__init__.py``): their tests run through the test file's classes."""
    out = []
    for path in sorted(test_path.parent.glob("*.py")):
        if path == test_path or path.name == "conftest.py" or re.match(r"^(test_.*|.*_test)\.py$", path.name):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if re.search(r"^\s+def test\w*\(self", text, re.M):
            out.append(path)
    return out


def _analyse(modules: list[Module], sympy: bool) -> tuple[dict[str, Item], dict[tuple[str, str], str | None]]:
    items: dict[str, Item] = {}
    nondet: dict[tuple[str, str], str | None] = {}
    for m_index, module in enumerate(modules):
        sets = dvp.set_bound_names(context._parsed(module.source)[0])
        for f_index, (_key, function) in enumerate(sorted(module.functions.items(), key=lambda kv: kv[0][1])):
            text = A.segment(module.source, function.span)
            nondet[(module.rel, function.qualname)] = dvp.nondeterministic_token(text, function, sets)
            for assertion in function.assertions:
                item_key = f"m{m_index}f{f_index}a{assertion.index}"
                items[item_key] = Item(item_key, module, function, assertion,
                                       dvp.choose(assertion, function, sympy=sympy))
    return items, nondet


# --- the pipeline for one test module --------------------------------------------------------

def build_test_file(repo: Repo, rel: str, source: str, options: RepoOptions, *,
                    origin: str = "original") -> Outcome:
    """:func:`_build_test_file`, its rejections made machine-independent (pytest's messages
    and output name files by absolute path: ``failed in setup: /home/.../tests/conftest.py:24``
    becomes ``tests/conftest.py:24``, a venv's file ``<venv>/lib/...``: :func:`repos.portable_text`)."""
    outcome = _build_test_file(repo, rel, source, options, origin=origin)
    for rejection in outcome.rejected:  # the reason and any text beside it (pytest's output, an answer)
        for key, value in rejection.items():
            if isinstance(value, str) and key != "candidate":
                rejection[key] = repos.portable_text(value, repo.root)
    return outcome


def _build_test_file(repo: Repo, rel: str, source: str, options: RepoOptions, *,
                     origin: str = "original") -> Outcome:
    """Tasks from the test module at ``rel`` whose text is ``source`` (the file's own text,
    or a mutated text for the same path: line numbers are those of ``source``).

    For ``origin != "original"`` (a mutated test whose expected values are stale) the probe
    run does not assert: the maskable assertions become probes (RepoReason D.4 stage 1),
    their values are captured, and the verify run re-checks each rebuilt assertion.
    The steps: read the module and its helpers, the probe run (traced, hash seed 0), the
    answer candidates per reached assertion, the verification runs (the check seeds), admission."""
    seeds = run_seeds(options)
    outcome = Outcome()
    label = f"{repo.key}/{rel}"
    test_path = repo.root / rel
    modules = _read_modules(repo, test_path, source, label, outcome)
    if modules is None:
        return outcome
    sympy = repo.name.lower() == "sympy"
    items, nondet = _analyse(modules, sympy)
    served = _probe_sources(modules, items, origin)
    first = run_tests(repo, test_path, served, trace=True, options=options, hash_seed=seeds[0])
    tried: list[str] = []
    if not first.records and first.ok and first.result.exit_code not in (0, 5):
        first, repo, tried = _other_test_tools(repo, test_path, served, options, seeds[0], first)
    if not first.records:
        _reject_run_without_records(first, label, outcome, tried)
        return outcome
    pending = _pending_assertions(repo, first.records, modules, items, nondet, options, sympy, outcome)
    if not pending:
        return outcome
    verification = _Verification.of(pending)
    keep = sorted({p.record["nodeid"] for p in pending})
    verify_sources = verification.sources(modules, items, origin)
    # every module is a hash-order suspect (its library's code is not read): at least
    # hashseeds.MIN_CHECKS verification runs, a coin flip of set order passes 1 in 32 (issue 33)
    seeds = seeds + hashseeds.extra(options)
    runs = run_many(repo, [pytest_job(f"verify-{n}", repo, test_path, verify_sources, trace=False, options=options,
                                      keep=keep, hash_seed=seed) for n, seed in enumerate(seeds[1:], 1)])
    admitted = _admitted(pending, runs, seeds, verification, outcome)
    _disambiguate(admitted, outcome)
    analysis, store = slice_cache(), TraceStore()
    copies = _agent_copies(modules, items, [p for p in admitted if not p.dropped])
    for p in admitted:
        if p.dropped:
            continue
        task = _task(repo, rel, modules, items, p, options, origin, analysis, store, outcome, copies)
        if task is not None:
            outcome.tasks.append(task)
    _cap_per_function(outcome, int(options.get("max_tasks_per_function") or 0))
    return outcome


def _cap_per_function(outcome: Outcome, cap: int) -> None:
    """The first ``cap`` tasks of each test function (``source_id``) kept, the rest rejected
    (stage ``cap``; :mod:`.balance`)."""
    if cap <= 0:
        return
    seen: dict[str, int] = defaultdict(int)
    kept = []
    for task in outcome.tasks:
        seen[task["source_id"]] += 1
        if seen[task["source_id"]] <= cap:
            kept.append(task)
        else:
            outcome.reject(task["id"], "cap", f"max_tasks_per_function={cap}: {task['source_id'].split('::')[-1]} "
                           f"has more tasks", answer=task["answer"])
    outcome.tasks[:] = kept


def _read_modules(repo: Repo, test_path: Path, source: str, label: str, outcome: Outcome) -> list[Module] | None:
    """The test module (text ``source``) and its helper modules, parsed; None when the test
    module itself does not parse (a ``source`` rejection; a helper that does not is left out)."""
    modules: list[Module] = []
    for path, text in [(test_path, source)] + [(p, p.read_text(encoding="utf-8")) for p in _helper_modules(repo, test_path)]:
        try:
            functions = A.test_functions(text)
        except SyntaxError as exc:
            if path == test_path:
                outcome.reject(label, "source", f"syntax error: {exc}")
                return None
            continue
        modules.append(Module(path.relative_to(repo.root).as_posix(), path, text, functions))
    return modules


def _probe_sources(modules: list[Module], items: dict[str, Item], origin: str) -> dict[str, str]:
    """The texts the probe run serves: each module with its maskable assertions turned into
    probes (and, for a mutated test, every assertion neutralised)."""
    probed = [(k, it) for k, it in items.items() if isinstance(it.choice, dvp.Choice)]
    served = {}
    for module in modules:
        mine = [(k, it.assertion) for k, it in probed if it.module is module]
        splices = A.probe_splices(module.source, mine)
        if origin != "original":
            splices += A.neutralize_splices([a for f in module.functions.values() for a in f.assertions])
        served[str(module.path)] = A.apply(module.source, splices)
    return served


def _other_test_tools(repo: Repo, test_path: Path, served: dict[str, str], options: RepoOptions, seed: int,
                      first: PytestReport) -> tuple[PytestReport, Repo, list[str]]:
    """A module the default pytest cannot collect, run under the repository's declared pytest
    bounded below each earlier major (:func:`testdeps.pytest_fallbacks`) until one collects it:
    (the run, the repository with that venv, what was tried, each with its outcome). The
    default corpus's pins are kept as they are."""
    from execbench.sources import testdeps

    used = repo.config.test_deps[0] if repo.config.test_deps else ""
    if repo.name.lower() in repos.DEFAULT_BY_NAME or not used.startswith("pytest"):
        return first, repo, []
    tried = [f"{used} (collection failed)"]
    try:
        declared = testdeps.declared(repo.root, repo.name).requirements
    except Exception as exc:  # noqa: BLE001 - unreadable declarations: nothing else to try
        return first, repo, [*tried, f"no declarations read: {type(exc).__name__}"]
    for requirement in testdeps.pytest_fallbacks(declared, used):
        try:
            other = repos.with_test_deps(repo, (requirement, *repo.config.test_deps[1:]))
        except SourceError as exc:
            tried.append(f"{requirement} (not installable: {str(exc)[:100]})")
            continue
        run = run_tests(other, test_path, served, trace=True, options=options, hash_seed=seed)
        if run.records:
            return run, other, [*tried, f"{requirement} (collected)"]
        tried.append(f"{requirement} (collection failed)")
    return first, repo, tried


def _reject_run_without_records(first: Any, label: str, outcome: Outcome, tried: Sequence[str] = ()) -> None:
    """The rejection of a probe run that ended without a test record: never a silent "no tasks";
    ``tried``: the test tools tried (:func:`_other_test_tools`)."""
    if not first.ok:
        outcome.reject(label, "execution", f"test run failed: {first.fatal or first.reason}",
                       output=first.stderr_tail[-1500:])
        return
    code = first.result.exit_code
    if code == 5:
        outcome.reject(label, "execution", "no_tests_collected: pytest collected no test in the module",
                       output=first.stderr_tail[-1500:])
    elif code != 0:
        also = f" (tried: {'; '.join(tried)})" if tried else ""
        outcome.reject(label, "execution", f"collection_failed: {pytest_message(first)}{also}",
                       exit_code=code, output=first.stderr_tail[-1500:])


def _pending_assertions(repo: Repo, records: list[TestRecord], modules: list[Module], items: dict[str, Item],
                        nondet: dict[tuple[str, str], str | None], options: RepoOptions, sympy: bool,
                        outcome: Outcome) -> list[Pending]:
    """Per (test instance, maskable assertion) of the probe run: its answer candidates and the
    wrong values the admission gate substitutes, awaiting verification; the rest rejected."""
    by_function = {(str(Path(m.path).resolve()), fl): (m, f) for m in modules for (q, fl), f in m.functions.items()}
    pending: list[Pending] = []  # per (test instance, item) awaiting verification
    environment = environment_patterns(repo)
    instances: dict[tuple[str, str], int] = defaultdict(int)
    folded: set[tuple[str, str]] = set()
    for record in records:
        found = _nondeterministic_function(record, by_function, nondet) or \
            _traced_test_function(repo, record, by_function, options, outcome)
        if found is None:
            continue
        module, function = found
        test_label = f"{repo.key}/{record['nodeid']}"
        fkey = (module.rel, function.qualname)
        if nondet.get(fkey) == dvp.SET_PARAMETRIZE:  # its instances' ids differ between runs: one row per function
            if fkey in folded:
                continue
            folded.add(fkey)
            test_label = f"{repo.key}/{module.rel}::{function.qualname}"
        mine = [it for it in items.values() if it.function is function and it.module is module]
        if not mine:
            outcome.reject(test_label, "selection", "no assertions in the test function")
            continue
        instances[fkey] += 1
        if instances[fkey] > options["max_instances"]:
            outcome.reject(test_label, "selection", f"more than {options['max_instances']} instances of "
                           f"{function.qualname} (parametrised or inherited)")
            continue
        token = nondet.get(fkey)
        for it in mine:
            at = f"{test_label}@L{it.assertion.line}"
            base: RejectionBase = {"assertion": it.assertion.text[:500], "line": it.assertion.line}
            if token:
                outcome.reject(at, dvp.SEMANTIC, f"nondeterministic_in_test:{token}", **base)
                continue
            if isinstance(it.choice, dvp.DvpRejection):
                outcome.reject(at, it.choice.stage, it.choice.reason, **base)
                continue
            runs = record.get("probes", {}).get(it.key)
            if not runs:
                outcome.reject(at, "execution", "assertion_not_reached", **base)
                continue
            if it.key in record.get("overflow", []):
                outcome.reject(at, dvp.SEMANTIC, "multiple_values: executed too often", **base)
                continue
            cands, why = _answer_candidates(it, runs, sympy, environment)
            if why is None:
                why = _readable_without_running(it, runs)
            if why is not None:
                outcome.reject(at, why[0], why[1], **base)
                continue
            wrong, guard = _wrong_values(runs, it, sympy, cands)
            pending.append(Pending(record=record, item=it, candidates=cands, label=at, base=base, values=runs,
                                   wrong=wrong, guards=guard))
    return pending


def _nondeterministic_function(record: TestRecord, by_function: dict[Any, Any],
                               nondet: dict[tuple[str, str], str | None]) -> tuple[Module, Any] | None:
    """The (module, test function) of a record whose function is nondeterministic by its text
    (``dvp.nondeterministic_token``: hypothesis ``@given``, ``random``, ...), whatever its run did:
    such a run passes, fails, overruns the trace caps or scores under the threshold by chance
    (natsort's ``@given`` tests), so its rejection is the static one, decided before the run's
    outcome is read and the same in every build."""
    fn = record.get("function")
    found = by_function.get((os.path.realpath(str(fn[0])), fn[1])) if fn else None
    return found if found is not None and nondet.get((found[0].rel, found[1].qualname)) else None


def _traced_test_function(repo: Repo, record: TestRecord, by_function: dict[Any, Any], options: RepoOptions,
                          outcome: Outcome) -> tuple[Module, Any] | None:
    """The (module, test function) of a probe-run record that passed, was traced within the caps
    and scores over the threshold; None (and a rejection) otherwise."""
    nodeid = record["nodeid"]
    test_label = f"{repo.key}/{nodeid}"
    phases = record.get("phases", {})
    failed = [(w, p) for w, p in phases.items() if p["outcome"] != "passed"]
    if failed:
        when, phase = failed[0]
        outcome.reject(test_label, "execution", f"{phase['outcome']} in {when}: {phase.get('message', '')}".strip())
        return None
    fn = record.get("function")
    found = by_function.get((os.path.realpath(str(fn[0])), fn[1])) if fn else None
    if found is None:
        outcome.reject(test_label, "execution", "test function is not defined in the test module or its helpers")
        return None
    module, function = found
    trace = record.get("trace")
    status = trace.get("status") if trace else None
    if trace is None or status != "ok":
        too_large = trace.get("too_large") if trace else None
        reason = {"too_large": f"trace over the caps: {too_large}",
                  "no_entry": "test function not found in the trace"}.get(status or "", "no trace")
        outcome.reject(test_label, "execution", reason)
        return None
    if trace["score"] < options["threshold"]:
        outcome.reject(test_label, "selection", f"complexity score {trace['score']:.3f} < {options['threshold']}",
                       **trace["stats"])
        return None
    return module, function


@dataclasses.dataclass
class _Verification:
    """What the verification run substitutes per item key: the texts (candidates first, the first
    that passes is the answer; then the admission gate's wrong values and the respellings), the
    "candidate == sentinel" checks, the dotted names to resolve to aliases, the guards ("it
    differs from the answer") of wrong values, and the respelling variants per candidate.
    One of the wrong values passing means many solutions."""

    union: dict[str, list[str]]
    extra: dict[str, list[str]]
    names: dict[str, list[str]]
    guards: dict[str, dict[str, str]]
    respell: dict[str, dict[str, dict[str, str]]]

    @classmethod
    def of(cls, pending: list[Pending]) -> _Verification:
        union: dict[str, list[str]] = defaultdict(list)
        extra: dict[str, list[str]] = defaultdict(list)  # "candidate == sentinel" per text candidate
        names: dict[str, list[str]] = defaultdict(list)  # dotted names to resolve to aliases
        for p in pending:
            key = p.item.key
            for c in p.candidates:
                if c["text"] not in union[key]:
                    union[key].append(c["text"])
                if c["kind"] != "python-literal" and c["text"] not in extra[key]:
                    extra[key].append(c["text"])
                for name in _dotted_names(c["text"]) if c["kind"] == "text" else []:
                    if name not in names[key]:
                        names[key].append(name)
        guards: dict[str, dict[str, str]] = defaultdict(dict)  # wrong text → "it differs from the answer"
        respell: dict[str, dict[str, dict[str, str]]] = defaultdict(dict)  # key → candidate → {rule: text}
        for p in pending:
            key = p.item.key
            for c in p.candidates:
                if c["kind"] == "text" and c["form"] == "constructor":
                    respell[key][c["text"]] = spelling_variants(c["text"])
            for text in p.wrong:
                if text not in union[key]:
                    union[key].append(text)
                if text in p.guards:
                    guards[key][text] = p.guards[text]
        for key, per_candidate in respell.items():  # after the wrong values: their indexes stay put
            for variants in per_candidate.values():
                for text in variants.values():
                    if text not in union[key]:
                        union[key].append(text)
        return cls(union, extra, names, guards, respell)

    def sources(self, modules: list[Module], items: dict[str, Item], origin: str) -> dict[str, str]:
        """The texts the verification run serves."""
        union, extra, names, guards = self.union, self.extra, self.names, self.guards
        verify_served = {}
        for module in modules:
            splices = []
            for key, texts in union.items():
                it = items[key]
                if it.module is module:
                    assert isinstance(it.choice, dvp.Choice)  # a pending item's choice
                    equal_everything = [f"({text}) == {A.SENTINEL}()" for text in extra[key]]
                    splices.append(A.verify_splice(module.source, key, it.assertion, it.choice.masked, texts,
                                                   equal_everything + list(guards[key].values()), names[key]))
            if origin != "original":  # stale expected values elsewhere must not fail the test
                verified = {id(items[key].assertion) for key in union}
                splices += A.neutralize_splices([a for f in module.functions.values() for a in f.assertions
                                                 if id(a) not in verified])
            verify_served[str(module.path)] = A.apply(module.source, splices)
        return verify_served


@dataclasses.dataclass
class _VerifyRun:
    """One verification run: its hash seed, its report and its records by test id."""

    seed: int
    report: PytestReport
    by_node: dict[str, TestRecord]


def _verified(p: Pending, runs: list[_VerifyRun], key_seed: int,
              outcome: Outcome) -> tuple[TestRecord, list[Any]] | None:
    """The first verification run's record of ``p``'s test and the checks of every
    verification run; None when ``p`` is rejected: its test did not pass or its assertion was
    not reached in a verification run, or its value differs from the probe run's (whose hash
    seed is ``key_seed``): ``unstable_value``, naming the seeds."""
    it = p.item
    where = {run.seed: "" if len(runs) == 1 else f" (hash seed {run.seed})" for run in runs}
    first: TestRecord | None = None
    checks: list[Any] = []
    differ: list[int] = []
    assert isinstance(it.choice, dvp.Choice)  # a pending item's choice
    actual_before = {json.dumps(_value_text(run.get(str(it.choice.actual)))) for run in p.values}
    for run in runs:
        seed, rec = run.seed, run.by_node.get(p.record["nodeid"])
        if rec is None or any(ph["outcome"] != "passed" for ph in rec.get("phases", {}).values()):
            why = "test did not pass in the verification run" if rec else f"verification run: {run.report.reason}"
            outcome.reject(p.label, "verification", why + where[seed], **p.base)
            return None
        found = rec.get("verify", {}).get(it.key)
        if not found:
            outcome.reject(p.label, "verification", "assertion not reached in the verification run" + where[seed],
                           **p.base)
            return None
        if {json.dumps(_value_text(c["value"])) for c in found} != actual_before:
            differ.append(seed)
        first = first or rec
        checks += found
    if differ:
        outcome.reject(p.label, dvp.SEMANTIC, f"unstable_value: differs between runs: hash seed {key_seed}'s value "
                       f"differs from {', '.join(map(str, differ))}'s", hash_seeds=[key_seed, *(r.seed for r in runs)],
                       **p.base)
        return None
    assert first is not None  # (at least one verification run)
    return first, checks


def _admitted(pending: list[Pending], runs: list[PytestReport], seeds: list[int], verification: _Verification,
              outcome: Outcome) -> list[Pending]:
    """The pending assertions the verification runs admit, with their answer, aliases and
    respellings; the rest rejected (unstable value, no candidate passing in every run, many
    solutions)."""
    union, extra, guards, respell = verification.union, verification.extra, verification.guards, verification.respell
    admitted: list[Pending] = []
    indexed = [_VerifyRun(seed, run, {r["nodeid"]: r for r in run.records})
               for seed, run in zip(seeds[1:], runs, strict=True)]
    for p in pending:
        it = p.item
        verified = _verified(p, indexed, seeds[0], outcome)
        if verified is None:
            continue
        rec2, checks = verified
        texts = union[it.key]

        def passes(index: int, checks: list = checks) -> bool:
            return all(len(c["checks"]) > index and c["checks"][index] is True for c in checks)

        chosen = None
        for cand in p.candidates:
            if passes(texts.index(cand["text"])):
                chosen = cand
                break
        if chosen is None:
            dropped = p.candidates[0].get("refused_other")
            if dropped:
                outcome.reject(p.label, dvp.MORPHOLOGY, f"answer_not_gradable: {dropped} (no other candidate "
                               "passes)", candidates=[c["text"] for c in p.candidates], **p.base)
            else:
                outcome.reject(p.label, "verification", "no candidate answer passes the assertion when "
                               "substituted", candidates=[c["text"] for c in p.candidates], **p.base)
            continue
        guarded = list(guards[it.key])

        def really_wrong(w: str, guarded: list = guarded, texts: list = texts, key: str = it.key) -> bool:
            # (oo) + 1 is oo: not a wrong value
            return w not in guarded or passes(len(texts) + len(extra[key]) + guarded.index(w))

        wrong = next((w for w in p.wrong if passes(texts.index(w)) and really_wrong(w)), None)
        if wrong is not None:
            what = "an unrelated object" if wrong == f"{A.SENTINEL}()" else f"the wrong value {wrong[:80]}"
            outcome.reject(p.label, dvp.SEMANTIC, f"many_solutions: {what} passes the assertion too",
                           answer=chosen["text"], **p.base)
            continue
        if chosen["text"] in extra[it.key] and passes(len(texts) + extra[it.key].index(chosen["text"])):
            outcome.reject(p.label, dvp.SEMANTIC, "many_solutions: the answer equals an unrelated object",
                           answer=chosen["text"], **p.base)
            continue
        aliases = [g for g in (rec2.get("aliases") or {}).get(it.key, []) if isinstance(g, list) and len(g) > 1]
        variants = respell.get(it.key, {}).get(chosen["text"], {})
        spellings = sorted(rule for rule, text in variants.items() if passes(texts.index(text)))
        admitted.append(dataclasses.replace(p, answer=chosen, aliases=aliases, spellings=spellings))
    return admitted


def pytest_message(report: Any) -> str:
    """Pytest's own words for a run that ended without test records: the first ``E   ...``
    line of its error report, else the last exception line of a traceback
    (``pytest.PytestRemovedIn9Warning: The (path: py.path.local) argument is deprecated``),
    else an ``ERROR`` line, else its last line."""
    out = report.result.stdout.decode("utf-8", "replace") + "\n" + (report.result.stderr or "")
    lines = [re.sub(r"^(INTERNALERROR>)\s*", "", line).rstrip() for line in out.splitlines() if line.strip()]
    first_e = next((line for line in lines if re.match(r"^E\s{2,}\S", line)), None)
    if first_e:
        return re.sub(r"^E\s+", "", first_e).strip()[:300]
    raised = [line for line in lines if re.match(r"^[\w.]*(Error|Exception|Warning|Exit)\b:", line)]
    if raised:
        return raised[-1].strip()[:300]
    error = next((line for line in lines if line.startswith("ERROR")), None)
    return (error or (lines[-1] if lines else f"exit code {report.result.exit_code}"))[:300]


def _value_text(rendered: RenderedValue | None) -> str | None:
    if rendered is None:  # the side was not rendered
        return None
    return rendered.get("literal", rendered.get("sympy"))


def _literal(run: dict[str, RenderedValue], side: int) -> str | None:
    """The literal form of one side's rendered value in one execution (None: none)."""
    rendered = run.get(str(side))
    return rendered.get("literal") if rendered else None


def environment_patterns(repo: Repo) -> list[tuple[str, re.Pattern[str]]]:
    """What a value must not contain: the build's own paths (source tree, cache dir, venv,
    interpreter, home dir), its host name and its user name (as ``user@``, ``~user``,
    ``/home/user``; a bare word such as ``root`` is a common value, the home dir covers
    ``/root``). Such values differ between two builds in different places."""
    import getpass
    import socket

    paths: dict[str, str] = {}
    for label, path in [("source tree", repo.root), ("source tree", repo.import_root), ("cache dir", cache_dir()),
                        ("venv", repo.python.parent.parent), ("interpreter", Path(sys.base_prefix)),
                        ("interpreter", Path(sys.prefix)), ("home dir", Path.home())]:
        for variant in {str(path), os.path.realpath(path)}:
            if len(variant) > 1:
                paths.setdefault(variant, label)
    out = [(label, re.compile(r"(?<![\w.~%-])" + re.escape(text) + r"(?![\w.-])"))
           for text, label in sorted(paths.items(), key=lambda kv: -len(kv[0]))]
    try:
        host = socket.gethostname()
    except OSError:
        host = ""
    if len(host) >= 4 and host != "localhost":
        out.append(("host name", re.compile(r"(?<![\w-])" + re.escape(host) + r"(?![\w-])")))
    try:
        user = getpass.getuser()
    except Exception:  # noqa: BLE001 - no user name to look for
        user = ""
    if user:
        u = re.escape(user)
        out.append(("user name", re.compile(rf"(?<![\w.-]){u}@|~{u}(?![\w.-])|/home/{u}(?![\w.-])")))
    return out


def environment_dependent(texts: list[str | None], patterns: Sequence[tuple[str, re.Pattern[str]]]) -> str | None:
    """The first environment label found in ``texts`` (:func:`environment_patterns`)."""
    for text in texts:
        if not text:
            continue
        for label, pattern in patterns:
            if pattern.search(text):
                return label
    return None


def _answer_candidates(it: Item, runs: list[dict[str, RenderedValue]], sympy: bool,
                       environment: Sequence[tuple[str, re.Pattern[str]]] = ()
                       ) -> tuple[list[AnswerCandidate], tuple[str, str] | None]:
    """Answer texts to verify, best first: the actual operand's runtime value as a literal
    (or sympy text), the masked operand's runtime value, then the original masked text when
    its form passes funnel 2. The answer always comes from execution: text is only kept if
    substituting it makes the assertion pass."""
    choice = it.choice
    assert isinstance(choice, dvp.Choice)
    actual = [a for a in (r.get(str(choice.actual)) for r in runs) if a]
    expected = [e for e in (r.get(str(choice.masked)) for r in runs) if e]
    if len(actual) < len(runs):
        return [], ("execution", "assertion_not_reached")
    kinds = {json.dumps(sorted((k, v) for k, v in a.items() if k in ("literal", "sympy", "type"))) for a in actual}
    if len(kinds) > 1:
        return [], (dvp.SEMANTIC, f"multiple_values: {len(runs)} executions disagree")
    value, masked_value = actual[0], runs[0].get(str(choice.masked))  # None: the expected side was not rendered
    where = environment_dependent([t for r in actual + expected for t in (r.get("literal"), r.get("sympy"))],
                                  environment)
    if where:
        return [], (dvp.SEMANTIC, f"environment_dependent: the value holds the build's {where}")
    out: list[AnswerCandidate] = []
    ungradable: list[str] = []

    def add(text: str | None, source: str, form: str, kind: str) -> None:
        if text is None or any(c["text"] == text for c in out):
            return
        try:
            tree = ast.parse(text, mode="eval")
        except SyntaxError:
            return
        local = sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} & it.function.local_names)
        if kind != "python-literal" and local:  # `error.expr`: names an object only the test has
            ungradable.append(f"local_object: {text[:200]} names the test's own local {local[0]!r}")
            return
        # An answer the grader refuses (a dunder attribute; a sympy relation its parser does not
        # take) could never be graded correct: it is not offered.
        if kind == "sympy":
            from execbench.families.repo import sympy_parse

            try:
                sympy_parse.parse_sympy(text)
            except sympy_parse.SympyParseError as exc:
                ungradable.append(str(exc))
                return
        else:
            from execbench.families.repo.compare import Refused, parse_answer

            try:
                parse_answer(text)
            except (Refused, RecursionError) as exc:
                ungradable.append(str(exc))
                return
        out.append({"text": text, "source": source, "form": form, "kind": kind, "type": value.get("type")})

    add(value.get("literal"), "runtime-value", "literal", "python-literal")
    if sympy:
        add(value.get("sympy"), "runtime-value", "sympy_expression", "sympy")
    if masked_value is not None:
        add(masked_value.get("literal"), "runtime-value (expected operand)", "literal", "python-literal")
        if sympy:
            add(masked_value.get("sympy"), "runtime-value (expected operand)", "sympy_expression", "sympy")
    if not choice.variable and choice.form.priority > 0:
        _add_text(add, it.module.source, it.assertion.operands[choice.masked], choice.form, "test-text (verified)")
    definitions = _definitions(it)
    if len(definitions) == 1 and definitions[0][1].priority in (2, 3, 4):
        # `expected = URL("http://a")` ... `assert url == expected`: the expression that defined
        # the variable, hidden from the prompt, verified; after the runtime literal, so it is the
        # answer only when the value has no literal form (or its literal does not pass).
        node, form = definitions[0]
        _add_text(add, it.module.source, node, form, "test-text (definition of the variable, verified)")
    if it.assertion.op == "is":  # identity: only singletons, never a fresh object (literal or constructed)
        kept = [c for c in out if (c["kind"] != "python-literal" or c["text"] in ("None", "True", "False", "..."))
                and c["form"] != "constructor"]
        if out and not kept:
            return [], (dvp.MORPHOLOGY, "identity_with_non_singleton_value")
        out = kept
    clean = [c for c in out if not dvp.memory_address(c["text"])]
    if out and not clean:
        return [], (dvp.SEMANTIC, "memory_address")
    if not clean:
        if ungradable:
            first = ungradable[0]
            return [], (dvp.MORPHOLOGY, first if first.startswith("local_object") else f"answer_not_gradable: {first}")
        if choice.variable:
            return [], (dvp.MORPHOLOGY, f"pure_variable_reference: no literal form for {value.get('type')}")
        if value.get("too_big"):
            return [], (dvp.MORPHOLOGY, "value_too_large")
        return [], (dvp.MORPHOLOGY, f"no_literal_form:{value.get('type')}")
    if ungradable:  # if none of the others passes, the refused text was the answer
        clean = [AnswerCandidate(**c, refused_other=ungradable[0]) for c in clean]
    return clean, None


def _literal_value(text: str | None) -> tuple[bool, Any]:
    """(ok, value) of a literal text rendered by the plugin or written in the test."""
    if not text or len(text) > 4000:
        return False, None
    try:
        return True, ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def _wrong_values(runs: list[dict[str, RenderedValue]], it: Item, sympy: bool, cands: list[AnswerCandidate]
                  ) -> tuple[list[str], dict[str, str]]:
    """The admission gate's wrong answers: a few values of the answer's type that differ from
    it (int ± 1, the other bool, a dropped or added element, ...) and an unrelated sentinel
    object. None of them may pass the assertion when substituted. The second result maps a
    wrong text whose difference is only known at run time (sympy ``(A) + 1``: ``oo + 1`` is
    ``oo``) to the expression that checks it differs."""
    choice = it.choice
    assert isinstance(choice, dvp.Choice)
    out: list[str] = []
    guards: dict[str, str] = {}
    literal = next((_literal(r, k) for k in (choice.actual, choice.masked) for r in runs[:1] if _literal(r, k)), None)
    ok, value = _literal_value(literal)
    if ok:
        for wrong in _same_type_variants(value):
            text = _stable_repr(wrong)
            if text != literal and len(text) <= 4000 and text not in out:
                out.append(text)
    elif sympy and cands and cands[0]["kind"] == "sympy":
        answer = cands[0]["text"]
        for wrong in (f"({answer}) + 1", f"-({answer})"):
            out.append(wrong)
            guards[wrong] = f"not (({wrong}) == ({answer}))"
    out.append(f"{A.SENTINEL}()")
    return out, guards


def _stable_repr(value: Any) -> str:
    """``repr`` with set elements in a fixed order: a set's own order follows string hashing,
    which differs between builder processes, and the text is stored with the task."""
    if isinstance(value, (set, frozenset)):
        inner = ", ".join(sorted(_stable_repr(v) for v in value))
        if not value:
            return repr(value)
        return "{" + inner + "}" if type(value) is set else "frozenset({" + inner + "})"
    if isinstance(value, list):
        return "[" + ", ".join(_stable_repr(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + ", ".join(_stable_repr(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_stable_repr(k)}: {_stable_repr(v)}" for k, v in value.items()) + "}"
    return repr(value)


def _same_type_variants(v: Any) -> list[Any]:
    t = type(v)
    if v is None:
        return []
    if t is bool:
        return [not v]
    if t is int:
        return [v + 1, v - 1]
    if t is float:
        return [v + 1.0, v * 2 if v else 0.5]
    if t is complex:
        return [v + 1]
    if t is str:
        return [v + "x", v[:-1]] if v else ["x"]
    if t is bytes:
        return [v + b"x", v[:-1]] if v else [b"x"]
    if t in (list, tuple):
        out = [v[:-1], v + v[-1:]] if v else [t([0])]
        if len(v) > 1 and v[::-1] != v:
            out.append(v[::-1])
        return out
    if t is dict:
        if not v:
            return [{0: 0}]
        keys = list(v)
        return [{k: v[k] for k in keys[:-1]}, {**v, ("execbench",): 0}]
    if t in (set, frozenset):
        if not v:
            return [t({0})]
        first = sorted(v, key=repr)[0]
        return [t(v - {first}), t(v | {("execbench",)})]
    return []


def _readable_without_running(it: Item, runs: list[dict[str, RenderedValue]]) -> tuple[str, str] | None:
    """RepoReason's question is what the code under test computes: an actual operand that
    only indexes, slices or reads attributes of values written literally in the shown test
    (``assert ___ == alist[0]`` with ``alist = [...]``) has the answer on the page."""
    choice = it.choice
    assert isinstance(choice, dvp.Choice)
    node = it.assertion.operands[choice.actual]
    if not any(isinstance(n, (ast.Subscript, ast.Attribute)) for n in ast.walk(node)):
        return None  # a bare name: whether the code under test changed it is a real question
    literals: dict[str, Any] = {}
    assigned: dict[str, int] = defaultdict(int)
    for sub in ast.walk(it.function.node):
        for target in (sub.targets if isinstance(sub, ast.Assign) else [sub.target]
                       if isinstance(sub, (ast.AugAssign, ast.AnnAssign, ast.For, ast.NamedExpr)) else []):
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    assigned[name.id] += 1
        if (isinstance(sub, ast.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0], ast.Name)
                and dvp._is_literal(sub.value)):
            ok, value = _literal_value(A.segment(it.module.source, sub.value))
            if ok:
                literals[sub.targets[0].id] = value
    literals = {k: v for k, v in literals.items() if assigned[k] == 1}
    try:
        static = _static(node, literals)
    except _NotStatic:
        return None
    except Exception:  # noqa: BLE001 - indexing a literal the wrong way: not readable
        return None
    runtime = _literal(runs[0], choice.actual)
    try:
        from execbench.families.repo.compare import Refused, parse_answer, same

        if runtime is None or not same(parse_answer(repr(static)[:5000]), parse_answer(runtime)):
            return None
    except (Refused, RecursionError, ValueError):
        return None
    return dvp.SEMANTIC, f"readable_without_running: {A.segment(it.module.source, node)[:80]} only reads literals of the test"


class _NotStatic(Exception):
    pass


_DATA_ATTRIBUTES = {"real", "imag", "numerator", "denominator"}


def _static(node: ast.expr, names: dict[str, Any]) -> Any:
    """The value of an expression made of literals, names bound to literals, subscripts,
    slices and numeric data attributes; :class:`_NotStatic` for anything else."""
    if isinstance(node, ast.Name):
        if node.id not in names:
            raise _NotStatic
        return names[node.id]
    if dvp._is_literal(node):
        ok, value = _literal_value(ast.unparse(node))
        if not ok:
            raise _NotStatic
        return value
    if isinstance(node, ast.Subscript):
        return _static(node.value, names)[_static(node.slice, names)]
    if isinstance(node, ast.Slice):
        parts = [None if p is None else _static(p, names) for p in (node.lower, node.upper, node.step)]
        if not all(p is None or type(p) is int for p in parts):
            raise _NotStatic
        return slice(*parts)
    if isinstance(node, ast.Tuple):
        return tuple(_static(e, names) for e in node.elts)
    if isinstance(node, ast.Attribute) and node.attr in _DATA_ATTRIBUTES:
        base = _static(node.value, names)
        if type(base) not in (int, float, complex):
            raise _NotStatic
        return getattr(base, node.attr)
    raise _NotStatic


def spelling_variants(text: str) -> dict[str, str]:
    """Respellings of a constructor answer's arguments a reader would take as the same value,
    each to be checked by substitution in the verify run (the real type decides):
    ``iterable_argument`` (``C([5, 6])`` ↔ ``C((5, 6))``) and ``keyword_dict``
    (``C(u=1, x=4)`` ↔ ``C({'u': 1, 'x': 4})``). The passing rules are stored with the task
    (``provenance.answer_spellings``) and applied by the grader without executing anything."""
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return {}
    if not isinstance(node, ast.Call):
        return {}
    out = {}
    args, kwargs = node.args, node.keywords
    if len(args) == 1 and not kwargs and isinstance(args[0], (ast.List, ast.Tuple)):
        elts = args[0].elts
        swapped: ast.expr = (ast.Tuple(elts=elts, ctx=ast.Load()) if isinstance(args[0], ast.List)
                             else ast.List(elts=elts, ctx=ast.Load()))
        out["iterable_argument"] = ast.unparse(ast.Call(node.func, [swapped], []))
    if not args and kwargs and all(k.arg is not None for k in kwargs):
        as_dict = ast.Dict(keys=[ast.Constant(k.arg) for k in kwargs], values=[k.value for k in kwargs])
        out["keyword_dict"] = ast.unparse(ast.Call(node.func, [as_dict], []))
    if (len(args) == 1 and not kwargs and isinstance(args[0], ast.Dict) and args[0].keys
            and all(isinstance(k, ast.Constant) and isinstance(k.value, str) and k.value.isidentifier()
                    for k in args[0].keys)):
        keywords = [ast.keyword(k.value, v) for k, v in zip(args[0].keys, args[0].values)]  # type: ignore[union-attr]  # checked above: constants
        out["keyword_dict"] = ast.unparse(ast.Call(node.func, [], keywords))
    return out


def _dotted_names(text: str) -> list[str]:
    """Maximal dotted names (``toolz.functoolz.flip``, a constructor's callee) in an answer text."""
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return []
    inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    out = []
    for n in ast.walk(tree):
        if isinstance(n, (ast.Name, ast.Attribute)) and id(n) not in inner:
            parts = []
            cur: ast.expr = n
            while isinstance(cur, ast.Attribute):
                parts.append(cur.attr)
                cur = cur.value
            if isinstance(cur, ast.Name) and cur.id not in ("None", "True", "False"):
                out.append(".".join([cur.id, *reversed(parts)]))
    return out


def _add_text(add: Callable[..., None], source: str, node: ast.expr, form: dvp.Form, origin: str) -> None:
    text = A.segment(source, node)
    text = " ".join(text.split()) if "\n" in text else text
    add(text, origin, form.name, "python-literal" if form.priority == 1 else "sympy" if form.priority == 5 else "text")


def _trace(p: Pending) -> TraceSummary:
    """The probe run's trace of a pending assertion's test (it passed :func:`_traced_test_function`)."""
    trace = p.record.get("trace")
    assert trace is not None
    return trace


def _disambiguate(admitted: list[Pending], outcome: Outcome) -> None:
    """Instances of one test function (parametrised or inherited) that show the same test
    text and the same input parameters must have the same answer, else none is kept."""
    groups: dict[tuple, list[Pending]] = defaultdict(list)
    for p in admitted:
        args = json.dumps(_trace(p).get("args", {}), sort_keys=True)
        groups[(p.item.key, args)].append(p)
    for group in groups.values():
        if len({p.answer["text"] for p in group if p.answer is not None}) > 1:
            for p in group:
                p.dropped = True
                outcome.reject(p.label, dvp.SEMANTIC,
                               "ambiguous_parameters: instances with the same inputs have different answers",
                               **p.base)


# --- tasks -----------------------------------------------------------------------------------

def _definitions(it: Item) -> list[tuple[ast.expr, dvp.Form]]:
    """Right-hand sides assigned to the question's variable in the test function (none when
    the expected operand is not a plain variable), with their funnel-2 form."""
    choice = it.choice
    assert isinstance(choice, dvp.Choice)
    if not choice.variable:
        return []
    name = it.assertion.operands[choice.masked].id  # type: ignore[attr-defined]  # ast.AST declares no fields; the node is a kind that has it
    return [(node.value, dvp.classify(node.value, it.function.local_names)) for node in ast.walk(it.function.node)
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)]


def _hidden_spans(items: dict[str, Item], it: Item, answer: str | None = None) -> list[A.Span]:
    """Expected operands of the function's other maskable assertions whose text shows a
    value (literals, constants, attributes, constructors; plain variable names show
    nothing); right-hand sides bound to the question's variable that show its value (literals,
    constructors, or expressions a reader computes: ``['neg'] * 5 + ['notneg'] * 5``) unless
    the variable is an input of the asked expression (``data1 = [...]`` feeding ``unique(data1 *
    3)``: hiding it makes the question unanswerable); and every compared value of another
    assertion that equals the answer (:func:`_answer_elsewhere`)."""
    spans = []
    for other in items.values():
        if (other.function is it.function and other is not it and isinstance(other.choice, dvp.Choice)
                and not other.choice.variable):
            spans.append(A.Span.of(other.assertion.operands[other.choice.masked]))
    choice = it.choice
    assert isinstance(choice, dvp.Choice)
    if not (choice.variable and it.assertion.operands[choice.masked].id in  # type: ignore[attr-defined]  # ast.AST declares no fields; the node is a kind that has it
            _inputs(it.function, it.assertion.operands[choice.actual])):
        static = leaks.static_values(it.function)
        shadowed = it.function.local_names - set(static)
        spans += [A.Span.of(value) for value, form in _definitions(it)
                  if form.priority in (1, 2, 3, 4) or static_eval.try_value(value, static, shadowed)[0]]
    if answer is not None:
        spans += _answer_elsewhere(it, answer)
    # Nested spans (a hidden operand inside another) would overlap: keep the outermost.
    return agent_copy.outermost(spans)


def _agent_copies(modules: list[Module], items: dict[str, Item], admitted: list[Pending]) -> dict[str, str]:
    """Each module's masked copy for the agent (:mod:`.agent_copy`): the expected operand of
    every maskable assertion and every span an admitted task's prompt hides."""
    spans: dict[str, list[A.Span]] = defaultdict(list)
    for it in items.values():
        if isinstance(it.choice, dvp.Choice):
            spans[it.module.rel] += [A.Span.of(it.assertion.operands[it.choice.masked]), *_hidden_spans(items, it)]
    for p in admitted:
        assert p.answer is not None
        spans[p.item.module.rel] += _hidden_spans(items, p.item, p.answer["text"])
    copies = {}
    for m in modules:
        try:
            copies[m.rel] = agent_copy.masked_copy(m.source, spans[m.rel])
        except ValueError:  # spans that do not splice: no copy, so the agent is refused the module
            continue
    return copies


def _library_check(repo: Repo) -> Callable[[str], bool]:
    """Whether a path of the tree (relative to its root) is one of the library's modules."""
    key = (str(repo.root), str(repo.import_root), repo.packages)
    if key not in _LIBRARY_FILES:
        _LIBRARY_FILES.clear()  # one repository at a time per process
        _LIBRARY_FILES[key] = {p.relative_to(repo.root).as_posix() for p in repo.library_files()}
    files = _LIBRARY_FILES[key]
    return lambda rel: rel in files


_LIBRARY_FILES: dict[tuple, set[str]] = {}


def _excluded_recall(p: Pending, table: str, options: RepoOptions, outcome: Outcome) -> bool:
    """Whether a data-table recall task is left out (``data_table_tasks=exclude``, the default;
    stage ``balance``)."""
    if str(options.get("data_table_tasks", "exclude")) != "exclude":
        return False
    outcome.reject(p.label, "balance", f"data_table_recall: the answer is an entry of {table}",
                   answer=p.answer["text"] if p.answer else None, **p.base)
    return True


def _data_tables(repo: Repo) -> dict[str, str]:
    """The library's data tables (:func:`balance.data_tables`), read once per repository."""
    files = tuple((p.relative_to(repo.root).as_posix(), str(p)) for p in sorted(repo.library_files()))
    return balance.data_tables(files)


def _bound_names(stmt: ast.AST) -> set[str]:
    """Names a statement binds or may change (targets, and the names of a bare call)."""
    targets: list[ast.AST] = []
    if isinstance(stmt, ast.Assign):
        targets = list(stmt.targets)
    elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
        targets = [stmt.target]
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        targets = [i.optional_vars for i in stmt.items if i.optional_vars is not None]
    elif isinstance(stmt, ast.Expr):  # cache.update(data), f(x): may change what they touch
        targets = [stmt.value]
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _read_names(stmt: ast.AST) -> set[str]:
    parts: list[ast.AST] = []
    if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)):
        parts = [stmt.value] if stmt.value is not None else []
        if isinstance(stmt, ast.Assign):  # d[k] = v reads k
            parts += [t for t in stmt.targets if not isinstance(t, ast.Name)]
    elif isinstance(stmt, (ast.For, ast.AsyncFor)):
        parts = [stmt.iter]
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        parts = [i.context_expr for i in stmt.items]
    return {n.id for p in parts for n in ast.walk(p) if isinstance(n, ast.Name)}


def _inputs(function: A.TestFunction, expr: ast.expr) -> set[str]:
    """Names the value of ``expr`` depends on inside the test function (a fixed point over
    the statements that bind or touch a name already in the set)."""
    deps = {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}
    # Assertion statements change nothing they compare (``self.assertEqual(actual, expected)``
    # does not feed ``actual`` from ``expected``: the unittest ``expected = [...]`` pattern).
    asserting = {id(a.node) for a in function.assertions if a.node is not None}
    stmts = [n for n in ast.walk(function.node) if isinstance(n, ast.stmt) and n is not function.node
             and id(n) not in asserting]
    changed = True
    while changed:
        changed = False
        for stmt in stmts:
            if _bound_names(stmt) & deps:
                new = _read_names(stmt) - deps
                if new:
                    deps |= new
                    changed = True
    return deps


def _compared(node: ast.AST) -> list[ast.expr]:
    """Values an assertion compares: the operands of its comparisons (through ``not``,
    ``and``/``or``), the elements of a literal container after ``in``, unittest arguments."""
    out: list[ast.expr] = []
    if isinstance(node, ast.Assert):
        todo: list[ast.AST] = [node.test]
        while todo:
            cur = todo.pop()
            if isinstance(cur, ast.BoolOp):
                todo += cur.values
            elif isinstance(cur, ast.UnaryOp) and isinstance(cur.op, ast.Not):
                todo.append(cur.operand)
            elif isinstance(cur, ast.Compare):
                for op, right in zip(cur.ops, cur.comparators):
                    out.append(right)
                    if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
                        out += right.elts
                out.append(cur.left)
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        for arg in node.value.args[:2]:
            out.append(arg)
            if isinstance(arg, (ast.Tuple, ast.List, ast.Set)):
                out += arg.elts
    return out


def _answer_elsewhere(it: Item, answer: str) -> list[A.Span]:
    """Compared values of the test's other assertions that equal the answer (grader
    equality, no execution): they are hidden too, or the answer would stand on the page. Equal
    means: as the grader reads the text; by the value a reader computes (:mod:`.static_eval`:
    ``{'foo'} | {f'foo_{i}' for i in range(3)}``); or, for a plain variable, by its one shown
    definition: ``arw.shift(weekday=SU) == arw`` beside the question ``arw.shift(weekday=6) ==
    ___`` shows the answer, ``arw = arrow.Arrow(2013, 5, 5, ...)`` (a plain variable whose value
    is not on the page shows nothing and stays)."""
    from execbench.families.repo.compare import Refused, parse_answer, same

    try:
        want = parse_answer(answer)
    except (Refused, RecursionError):
        return []
    function = it.function
    static = leaks.static_values(function)
    static = {k: v for k, v in static.items() if k in leaks.static_names(function)}
    shadowed = function.local_names - set(static)
    definitions = _single_definitions(function)
    out = []
    for other in function.assertions:
        if other is it.assertion or other.node is None:
            continue
        for node in _compared(other.node):
            if isinstance(node, ast.Name):  # a variable shows its value only through `==` (not `is`)
                shown = definitions.get(node.id) if other.op == "==" else None
                if shown is not None and (_text_equal(A.segment(it.module.source, shown), want)
                                          or static_eval.equals(shown, want, static, shadowed)):
                    out.append(A.Span.of(node))
                continue
            if dvp.classify(node, function.local_names).priority in (1, 2, 3, 4):
                try:
                    if same(parse_answer(A.segment(it.module.source, node)), want):
                        out.append(A.Span.of(node))
                        continue
                except (Refused, RecursionError):
                    pass
            if static_eval.equals(node, want, static, shadowed):
                out.append(A.Span.of(node))
    return out


def _text_equal(text: str, want: tuple) -> bool:
    from execbench.families.repo.compare import Refused, parse_answer, same

    try:
        return same(parse_answer(text), want)
    except (Refused, RecursionError):
        return False


def _single_definitions(function: A.TestFunction) -> dict[str, ast.expr]:
    """Right-hand sides of the names the function binds exactly once, by a one-name assignment."""
    counts: dict[str, int] = defaultdict(int)
    values: dict[str, ast.expr] = {}
    for node in ast.walk(function.node):
        for name in _bound_names(node) if not isinstance(node, ast.Expr) else ():
            counts[name] += 1
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            values[node.targets[0].id] = node.value
    return {k: v for k, v in values.items() if counts[k] == 1}


def assertion_difficulty(sliced: SliceResult, calls: list[CallJson], test_files: set[str]
                         ) -> tuple[float, int, bool]:
    """(Score, library lines, nested call) of an assertion's own dynamic slice: RepoReason's
    §3.4 Score with files, functions, calls and depth counted over the slice's relevant calls
    (not the whole test function); the number of relevant lines outside the test modules;
    and whether a relevant call lies deeper than depth 1 (a library call calling code)."""
    by_id = {c.get("id"): c for c in calls}
    relevant = [by_id[i] for i in sliced.get("relevant_calls") or [] if i in by_id]
    files = {c["file"] for c in relevant}
    funcs = {(c["file"], c.get("firstlineno"), c.get("func")) for c in relevant}
    depth = max((c.get("depth", 0) for c in relevant), default=0)
    score = (len(files) / 4) * 0.1 + (len(funcs) / 15) * 0.2 + (len(relevant) / 30) * 0.5 + (depth / 4) * 0.2
    library_lines = sum(len(lines) for f, lines in (sliced.get("relevant_lines") or {}).items() if f not in test_files)
    deeper = any(c.get("depth", 0) > 1 and c["file"] not in test_files for c in relevant)
    return score, library_lines, deeper


def read_after_construction(function: A.TestFunction, assertion: A.Assertion, actual: ast.expr,
                            texts: Sequence[str] = ()) -> str | None:
    """Why the asked expression is a trivial read, or None:

    * ``len(N)`` or ``N.attr`` right after ``N = C(...)`` (the last statement of the test that
      mentions ``N``, assertions included), where for ``N.attr`` some ``self.attr = <literal>``
      stands in ``texts`` (the test module and the traced library files): a constructor's default
      (``car = Car()`` then ``car.hand_count == ___``);
    * ``N.attr`` right after ``N.attr = <literal>``: a value set one statement earlier;
    * ``len(C())``: the size of a fresh, argument-less construction (``len(FrozenDict())``)."""
    node = actual
    is_len = isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len" \
        and len(node.args) == 1 and not node.keywords
    if is_len:
        node = node.args[0]  # type: ignore[attr-defined]  # a len() call, checked above
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.args and not node.keywords:
            return "size of a fresh construction"
    attr = None
    if not is_len and isinstance(node, ast.Attribute):
        attr, node = node.attr, node.value
    if not isinstance(node, ast.Name) or node.id in ("self", "cls") or (not is_len and attr is None):
        return None
    name = node.id
    last = None
    for stmt in A._walk_body(function.node.body):
        if stmt.lineno >= assertion.line:
            break
        if isinstance(stmt, (ast.For, ast.While, ast.If, ast.With, ast.Try, ast.FunctionDef, ast.ClassDef,
                             ast.AsyncFunctionDef, ast.AsyncFor, ast.AsyncWith)):
            if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(stmt)):
                return None  # touched in a block: not a straight read
            continue
        if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(stmt)):
            last = stmt
    if last is None or not isinstance(last, ast.Assign) or len(last.targets) != 1:
        return None
    target, value = last.targets[0], last.value
    callee = value.func if isinstance(value, ast.Call) else None
    callee_name = callee.id if isinstance(callee, ast.Name) else callee.attr if isinstance(callee, ast.Attribute) else ""
    if isinstance(target, ast.Name) and target.id == name and callee_name[:1].isupper():  # a class: Car(), OMD(...)
        if is_len:
            return "size right after construction"
        default = re.compile(rf"\bself\.{re.escape(attr or '')}\s*=\s*(-?\d[\w.]*|None|True|False|''|\"\"|\[\]|\{{\}}|\(\))\s*($|#)",
                             re.M)
        if any(default.search(text) for text in texts):
            return "a constructor's default read right after construction"
        return None
    if (attr is not None and isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
            and target.value.id == name and target.attr == attr and dvp._is_literal(value)):
        return "value set one statement earlier"
    return None


def plain_read(node: ast.expr) -> bool:
    """The asked expression only reads: names, attribute chains, ``len(...)`` of one, and
    calls without arguments (``car.hand_count``, ``len(FrozenDict())``)."""
    if isinstance(node, ast.Name):
        return True
    if isinstance(node, ast.Attribute):
        return plain_read(node.value)
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name) and node.func.id == "len" and len(node.args) == 1 and not node.keywords:
            return plain_read(node.args[0])
        return not node.args and not node.keywords and isinstance(node.func, ast.Name)
    return False


_COMPUTING = (ast.Call, ast.BinOp, ast.BoolOp, ast.Compare, ast.Subscript, ast.ListComp, ast.SetComp, ast.DictComp,
              ast.GeneratorExp, ast.Lambda, ast.IfExp, ast.AugAssign, ast.For, ast.While, ast.UnaryOp)


def plain_lines(sliced: SliceResult, sources: dict[str, str], test_files: set[str]) -> bool:
    """Every relevant library line of the slice stores or returns a name, attribute or
    constant (``self.hand_count = 0``, ``return self._n``): nothing is computed there."""
    for rel, lines in (sliced.get("relevant_lines") or {}).items():
        if rel in test_files:
            continue
        text = sources.get(rel, "")
        source_lines = text.splitlines()
        for line in lines:
            if not 0 < line <= len(source_lines):
                return False
            stripped = source_lines[line - 1].strip()
            if stripped.startswith(("def ", "async def ", "class ", "@")):
                continue
            try:
                tree = ast.parse(stripped)
            except SyntaxError:
                return False
            if any(isinstance(n, _COMPUTING) for n in ast.walk(tree)):
                return False
    return True


def _safe(text: str) -> str:
    cleaned = re.sub(r"[\s#]+", "_", text)
    if cleaned != text:
        cleaned += "~" + hashlib.sha256(text.encode()).hexdigest()[:6]
    return cleaned


def _metrics_unless_trivial(p: Pending, modules: list[Module], sliced: Any, calls: Any, sources: dict[str, str],
                            options: RepoOptions, outcome: Outcome) -> dict[str, float | int | None] | None:
    """The task's metrics (the trace's, the slice's, the assertion's own difficulty), or None when
    the difficulty gates reject the assertion (recorded in ``outcome``): ``trivial`` or an
    ``assertion_score`` below the threshold."""
    it, answer = p.item, p.answer
    assert answer is not None and isinstance(it.choice, dvp.Choice)
    module, function, assertion, choice = it.module, it.function, it.assertion, it.choice
    trace = _trace(p)
    stats = trace["stats"]
    metrics: dict[str, float | int | None] = {
        "complexity_score": trace["score"], "n_files": stats["files"], "n_funcs": stats["funcs"],
        "n_calls": stats["calls"], "max_depth": stats["depth"], "answer_chars": len(answer["text"]),
        "esv": None, "mcl": None, "dfi": None, "slice_files": None,
        "assertion_score": None, "slice_library_lines": None,
    }
    fill_metrics(metrics, sliced)
    if sliced:
        test_files = {m.rel for m in modules}
        score, library_lines, deeper = assertion_difficulty(sliced, calls, test_files)
        metrics["assertion_score"], metrics["slice_library_lines"] = round(score, 4), library_lines
        threshold = float(options.get("assertion_threshold", DEFAULT_OPTIONS["assertion_threshold"]))
        why = read_after_construction(function, assertion, assertion.operands[choice.actual],
                                      [module.source, *sources.values()])
        if why is None and (1 <= library_lines <= int(options.get("trivial_lines", DEFAULT_OPTIONS["trivial_lines"]))
                            and not deeper and plain_read(assertion.operands[choice.actual])
                            and plain_lines(sliced, sources, test_files)):
            why = f"a plain read of {library_lines} library line(s) that compute nothing, no nested call"
        if why is not None:
            outcome.reject(p.label, "difficulty", f"trivial: {why}", answer=answer["text"],
                           assertion_score=round(score, 4), **p.base)
            return None
        if score < threshold:
            outcome.reject(p.label, "difficulty", f"assertion_score: {score:.3f} < {threshold} over the "
                           "assertion's own slice", answer=answer["text"], **p.base)
            return None
    return metrics


class AnswerProvenance(TypedDict):
    """Where an admitted assertion's answer came from, what was masked and how it was checked."""

    answer_source: str
    resolved_from_variable: bool
    masked_operand: str  # cut at 2000 characters
    masked_side: str  # "left" or "right"
    operator: str
    assertion_kind: str
    morphology: dict[str, str | int]  # the masked text's form: name and priority
    executions: int
    answer_aliases: list[list[str]]
    answer_spellings: list[str]
    admission_wrong_values: list[str]


class RepoProvenance(AnswerProvenance):
    """A repo task's ``provenance`` (written in this key order: origin, the answer's, the rest)."""

    origin: str  # "original" or a mutation's origin
    key_hash_seed: int  # the probe run's PYTHONHASHSEED: its values are the answers
    repeats: int  # the runs that agreed: the probe run and repeats - 1 verification runs under the
    # build's check seeds (drawn per build: the manifest's settings.hash_seeds, not here)
    trace_ref: str
    slicing: str
    slice: SliceProvenance | None
    sdist_sha256: str | None
    tree_sha256: str
    test_sha256: str
    trace_limits: dict[str, int]
    threshold: float
    pure_python: str
    test_tool: str  # the pytest requirement the module ran under (another than the default: issue 35)
    data_table: str | None  # FILE:QUALNAME of the library table the answer is an entry of (balance.py)


def _answer_provenance(p: Pending, expr: str) -> AnswerProvenance:
    """The provenance of an admitted assertion's answer: where it came from, what was masked and
    how the admission checked it."""
    answer, choice, assertion = p.answer, p.item.choice, p.item.assertion
    assert answer is not None and isinstance(choice, dvp.Choice)
    return {
        "answer_source": answer["source"],
        "resolved_from_variable": choice.variable,
        "masked_operand": expr if len(expr) <= 2000 else expr[:2000] + "...",
        "masked_side": "left" if choice.masked == 0 else "right",
        "operator": assertion.op,
        "assertion_kind": assertion.kind + (f":{assertion.method}" if assertion.method else ""),
        "morphology": {"form": choice.form.name, "priority": choice.form.priority},
        "executions": len(p.values),
        "answer_aliases": [list(g) for g in p.aliases],
        "answer_spellings": list(p.spellings),  # verified argument respellings the grader accepts
        "admission_wrong_values": list(p.wrong),  # substituted; none that differs from the answer passed
    }


def _carried_context(repo: Repo, p: Pending, definitions: list[Any], hidden: list[A.Span], options: RepoOptions,
                     outcome: Outcome) -> tuple[str, list[Any]] | None:
    """The definitions the test reads, rendered (the test file's and those outside it), and the
    outside ones; None when the context gates reject the assertion (recorded in ``outcome``):
    ``context_missing`` or ``context_too_large``."""
    module, function, assertion, choice = p.item.module, p.item.function, p.item.assertion, p.item.choice
    assert isinstance(choice, dvp.Choice)
    ran = _touched(repo, p, outcome)
    if ran is None:
        return None
    is_library = _library_check(repo)
    spans = [*hidden, A.Span.of(assertion.operands[choice.masked])]
    here = [f.name for f in ran.fixtures if f.file == module.rel]
    definitions[:] = context.needed_definitions(module.source, function, spans, fixtures_run=here)
    elsewhere = [(f.name, f.file) for f in ran.fixtures if f.file not in (None, module.rel) and not is_library(f.file)]
    outside, missing = context.outside_definitions(
        repo.root, module.rel, module.source, function, definitions, is_library, spans,
        leaks.parametrized(function), fixtures_run=elsewhere)
    missing = missing or touched.missing(ran, function, _shown(module, function, definitions, outside), spans,
                                         is_library)
    if missing:
        outcome.reject(p.label, "context", missing, **p.base)
        return None
    carried = "\n\n".join(t for t in (context.render(module.source, definitions), context.render_outside(outside)) if t)
    budget = int(options.get("context_budget", DEFAULT_OPTIONS["context_budget"]))
    if context.tokens(carried) > budget:
        outcome.reject(p.label, "context", f"context_too_large: the test-file definitions the test reads take "
                       f"~{context.tokens(carried)} tokens > {budget}",
                       definitions=[d.name for d in definitions][:50] + [f"{o.file}:{o.definition.name}"
                                                                         for o in outside][:50], **p.base)
        return None
    return carried, outside


def _touched(repo: Repo, p: Pending, outcome: Outcome) -> touched.Touched | None:
    """What the test touched outside its function, from its key run's record (hostile input:
    validated); None (and a ``context_missing`` rejection) when the record is missing or malformed."""
    raw = p.record.get("context")
    try:
        return touched.parse(raw, repo.root)
    except touched.Invalid as exc:
        why = "the run recorded no context" if raw is None else f"unreadable record: {exc}"
        outcome.reject(p.label, "context", f"context_missing: {why}"[:500], **p.base)
        return None


def _shown(module: Module, function: A.TestFunction, definitions: list[Any], outside: list[Any]) -> touched.Shown:
    """The test-side definitions a prompt shows, for :func:`touched.missing`."""
    tree = context._parsed(module.source)[0]
    imports, stars = context._module_imports(module.source)
    nodes: list[tuple[str, str, ast.AST]] = [(module.rel, d.name.rsplit(".", 1)[-1], d.node) for d in definitions]
    nodes += [(o.file, o.definition.name, o.definition.node) for o in outside]
    own = {function.class_node.name} if function.class_node is not None else set()  # its header is shown
    return touched.Shown(module.rel, tree, nodes, imports, bool(stars), own)


def _record(repo: Repo, case: str, source_id: str, fields: RepoPromptFields, answer: AnswerCandidate,
            metrics: dict[str, float | int | None], provenance: RepoProvenance) -> dict[str, Any]:
    """The task record of an admitted assertion."""
    return {
        "id": make_id("repo", repo.key, case, "masked-assertion"),
        "family": "repo",
        "arm": "masked-assertion",
        "source_id": source_id,
        "language": "python",
        "prompt_fields": fields,
        "answer": answer["text"],
        "answer_kind": answer["kind"],
        "metrics": metrics,
        "provenance": provenance,
    }


def _task(repo: Repo, rel: str, modules: list[Module], items: dict[str, Item], p: Pending,
          options: RepoOptions, origin: str, analysis: Any = None, store: TraceStore | None = None,
          outcome: Outcome | None = None, copies: dict[str, str] | None = None) -> dict[str, Any] | None:
    """The task of an admitted assertion, or None when the last gates reject it (they are
    recorded in ``outcome``): ``context_missing``/``context_too_large``, ``answer_visible:
    <where>`` (:mod:`.leaks`, and on the agent's copies ``copies``: :mod:`.agent_copy`), the
    assertion's own complexity score and ``trivial``."""
    it: Item = p.item
    record, answer = p.record, p.answer
    assert answer is not None
    choice = it.choice
    assert isinstance(choice, dvp.Choice)
    module, function, assertion = it.module, it.function, it.assertion
    nodeid = record["nodeid"]
    trace = _trace(p)
    outcome = outcome if outcome is not None else Outcome()
    hidden = _hidden_spans(items, it, answer["text"])
    masked_source = A.mask_text(module.source, function, (assertion, choice.masked), hidden)
    blank = A.statement_text(module.source, assertion, choice.masked)
    test_context = A.context_text(module.source, function)
    definitions = context.needed_definitions(module.source, function,
                                             [*hidden, A.Span.of(assertion.operands[choice.masked])])
    shown = _carried_context(repo, p, definitions, hidden, options, outcome)
    if shown is None:
        return None
    carried, outside = shown
    definitions += [o.definition for o in outside]
    input_parameters = json.dumps(trace.get("args", {}), ensure_ascii=False)
    inputs = _inputs(function, assertion.operands[choice.actual])
    for d in definitions:  # names the carried helpers read feed the computation too
        if d.kind != "constant":
            inputs |= {n.id for n in ast.walk(d.node) if isinstance(n, ast.Name)}
    leak_at = leaks.answer_visible_at(
        function=function, source=module.source, masked=assertion.operands[choice.masked],
        actual=assertion.operands[choice.actual], answer=answer["text"], inputs=inputs, hidden=hidden,
        input_parameters=input_parameters, shown_texts=[masked_source, test_context, carried],
        context_nodes=[(d.name, d.node) for d in definitions if d.kind == "constant"])
    leak, place = leak_at if leak_at else (None, None)
    copies = copies or {}
    for path in dict.fromkeys([rel, module.rel]):
        if leak is None and path in copies:
            leak, place = agent_copy.leak_at(answer["text"], copies[path], inputs, function.qualname, path) or (None, None)
    if leak:
        outcome.reject(p.label, "leak", leak, answer=answer["text"], **({"place": place} if place else {}), **p.base)
        return None
    table = balance.table_entry(answer["text"], answer["kind"], _data_tables(repo), masked_source)
    if table and _excluded_recall(p, table, options, outcome):
        return None
    store = store or TraceStore()
    calls, sources = store.calls_and_sources(repo, nodeid, trace.get("calls", []), ((m.rel, m.source) for m in modules))
    expr = A.segment(module.source, assertion.operands[choice.masked])
    target: SliceTarget = {"file": module.rel, "line": assertion.line, "expr": expr, "end_line": assertion.span.end_lineno,
              "function": function.qualname}
    sliced, slice_status = slice_for(calls, sources, target, analysis)
    metrics = _metrics_unless_trivial(p, modules, sliced, calls, sources, options, outcome)
    if metrics is None:
        return None
    trace_ref = store.put(nodeid, calls, sources, target, repos.portable(repo.spec))
    case = f"{_safe(nodeid)}@L{assertion.line}"
    value_type = answer.get("type") or "object"
    fields: RepoPromptFields = {
        "masked_assertion": blank,
        "test_source": masked_source,
        "test_context": test_context,
        "test_definitions": carried,
        "input_parameters": input_parameters,
        "answer_form": answer["form"],
        "answer_type": value_type,
        "library": repo.name,
        "package": repo.name,
        "version": repo.version,
        "repo_spec": repos.portable(repo.spec) if not repo.spec.startswith("pypi:") else repo.spec,
        "repo_root": repos.portable(repo.root),  # relative to the repos cache when inside it
        "test_file": rel,
        "function_file": module.rel,
        "agent_copies": {path: agent_copy.store(copies[path]) for path in dict.fromkeys([rel, module.rel])
                         if path in copies},
        "test_id": nodeid,
        "function": function.qualname,
        "assertion_line": assertion.line,
    }
    provenance: RepoProvenance = {
        "origin": origin,
        **_answer_provenance(p, expr),
        # the check seeds are drawn per build (the manifest's settings.hash_seeds): not in the record
        "key_hash_seed": hashseeds.KEY_SEED,
        "repeats": int(options.get("repeats", 2)),
        "trace_ref": trace_ref,
        "slicing": slice_status,
        "slice": slice_provenance(sliced),
        "sdist_sha256": repo.sdist_sha256,
        "tree_sha256": repo.tree_sha256,
        "test_sha256": hashlib.sha256(module.source.encode()).hexdigest(),
        "trace_limits": {k: options[k] for k in ("max_depth", "max_calls", "max_line_events", "max_summary_bytes")},
        "threshold": options["threshold"],
        "pure_python": repo.config.note,
        "test_tool": repo.config.test_deps[0] if repo.config.test_deps else "",
        "data_table": table,  # the library table the answer is an entry of (kept with data_table_tasks=keep)
    }
    return _record(repo, case, f"{repo.key}/{module.rel}::{function.qualname}", fields, answer, metrics, provenance)
