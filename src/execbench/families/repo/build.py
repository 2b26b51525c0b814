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

import os
import re
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Sequence

from execbench.contract import BuildContext, Candidate, Outcome, SourceError, hashseeds
from execbench.contract.jsontypes import JSONObject, JSONValue
from execbench.families.repo.fairness.context import _parsed
from execbench.families.repo.fairness.masking import _agent_copies
from execbench.families.repo.preparation import packages
from execbench.families.repo.records.slicing_metrics import slice_cache
from execbench.families.repo.records.steps import DEFAULT_OPTIONS as DEFAULT_OPTIONS  # the builder's options (the contract)
from execbench.families.repo.records.steps import (Item, Module, Pending, RejectionBase, RepoOptions, RepoPayload,
                                                   TestFilePayload)
from execbench.families.repo.records.traces import TraceStore
from execbench.families.repo.selection import assertions as A
from execbench.families.repo.selection import dvp
from execbench.families.repo.tasks import _task
from execbench.families.repo.verification.admission import _Verification, _admitted, pytest_message
from execbench.families.repo.verification.answers import (_answer_candidates, _disambiguate, _readable_without_running,
                                                          _wrong_values, environment_patterns)
from execbench.families.repo.verification.runner import PytestReport, pytest_job, run_many, run_tests
from execbench.sources import repos
from execbench.sources.repos import Repo, RepoConfig

if TYPE_CHECKING:  # the plug-in imports pytest: the parent never loads it
    from execbench.families.repo.records.run_records import TestRecord

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


def candidates(sources: list[str], options: RepoOptions, context: BuildContext | None = None) -> Iterator[Candidate]:
    """The build's candidates; the manifest's ``settings.repositories`` (each prepared repository's test
    environment) and a windowed list's release window go into ``context`` (this build's state)."""
    context = context if context is not None else BuildContext()
    run_seeds(options)  # a bad repeats or check_seeds stops the build before any repository is prepared
    if str(options.get("data_table_tasks", "exclude")) not in ("exclude", "keep"):
        raise SourceError(f"data_table_tasks={options.get('data_table_tasks')!r}: expected exclude or keep")
    capped = bool(int(options.get("max_modules_per_package") or 0) or int(options.get("max_tasks_per_package") or 0))
    for spec in repos.expand_specs(sources):
        if packages.is_list(spec):  # one candidate per package, prepared where it is built
            yield from packages.list_candidates(spec, options, context)
            continue
        try:  # any failure is this checkout's rejection (an unprepared candidate), never a stopped build
            repo, test_files = repos.prepared(spec, full=bool(options.get("full")))
        except SourceError as exc:
            label = repos.spec_label(spec)
            yield Candidate(key=f"unprepared/{label}", payload={"unprepared": label, "reason": str(exc)[:2000]})
            continue
        prepared = context.settings.setdefault("repositories", {})
        try:
            prepared[repo.key] = test_environment(repo)
        except Exception as exc:  # noqa: BLE001 - the manifest note must not stop a build
            prepared[repo.key] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
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
        sets = dvp.set_bound_names(_parsed(module.source)[0])
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
