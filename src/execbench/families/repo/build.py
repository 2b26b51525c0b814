"""Building repo tasks: repository → test modules → traced, probed, verified assertions.

One candidate is one test module of one repository. :func:`build_test_file` is the whole
path from a test module's *text* to tasks, so the mutation engine can hand it a mutated
text for the same path and get tasks through the same tracing / DVP / masking / verify
path. Per module it runs the tests twice in the sandbox:

1. trace + probe (hash seed 0): every compared operand is wrapped in a probe that records
   its value; each test call runs under the depth-3 tracer (test function = depth 0);
2. verify (hash seed 1, only tests with pending assertions): each pending assertion is
   rewritten so its actual operand is evaluated once and every candidate answer is checked
   by the original assertion with the answer substituted for the masked operand.

Rejection stages: ``source``, ``execution`` (test failed / skipped / timed out / trace over
the caps / assertion not reached), ``selection`` (complexity score below the threshold,
parametrised-instance cap), ``dvp-semantic`` (funnel 1), ``dvp-morphology`` (funnel 2),
``verification`` (no candidate answer made the assertion pass when substituted).
"""

from __future__ import annotations

import ast
import gzip
import hashlib
import json
import os
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from execbench.dataset import make_id
from execbench.dataset.cache import cache_dir
from execbench.families.base import Candidate, Outcome, SourceError
from execbench.families.repo import assertions as A
from execbench.families.repo import dvp
from execbench.families.repo.runner import run_tests
from execbench.sources import repos
from execbench.sources.repos import Repo, RepoConfig

DEFAULT_OPTIONS: dict[str, Any] = {
    "threshold": 0.30,  # RepoReason §3.4: Score >= 0.30
    "max_depth": 3,  # test function = depth 0
    "max_calls": 1000,  # per-test caps: a test over any cap is rejected, not truncated
    "max_line_events": 100_000,
    "max_summary_bytes": 2_000_000,
    "test_timeout": 60,  # seconds per test
    "file_timeout": 1200,  # seconds per test module run
    "max_instances": 4,  # parametrised / inherited instances of one test function
    "full": False,  # default corpus: run every test module of sympy and networkx
}
_HINT_TYPES = {"int", "float", "complex", "str", "bytes", "bool", "NoneType", "list", "tuple", "dict", "set",
               "frozenset"}


# --- candidates ---------------------------------------------------------------------------

def repo_payload(repo: Repo) -> dict[str, Any]:
    c = repo.config
    return {"spec": repo.spec, "name": repo.name, "version": repo.version, "root": str(repo.root),
            "import_root": str(repo.import_root), "packages": list(repo.packages), "python": str(repo.python),
            "tree_sha256": repo.tree_sha256, "sdist_sha256": repo.sdist_sha256,
            "config": {"test_deps": list(c.test_deps), "env": dict(c.env), "test_modules": list(c.test_modules),
                       "exclude": list(c.exclude), "note": c.note}}


def repo_from_payload(p: dict[str, Any]) -> Repo:
    c = p["config"]
    config = RepoConfig(p["name"], p["version"], tuple(c["test_deps"]), dict(c["env"]), tuple(c["test_modules"]),
                        tuple(c["exclude"]), c.get("note", ""))
    return Repo(spec=p["spec"], name=p["name"], version=p["version"], root=Path(p["root"]),
                import_root=Path(p["import_root"]), packages=tuple(p["packages"]), python=Path(p["python"]),
                config=config, tree_sha256=p["tree_sha256"], sdist_sha256=p.get("sdist_sha256"))


def candidates(sources: list[str], options: dict[str, Any]) -> Iterator[Candidate]:
    for spec in repos.expand_specs(sources):
        repo = repos.prepare(spec, full=bool(options.get("full")))
        payload = repo_payload(repo)
        for test_file in repo.test_files():
            rel = test_file.relative_to(repo.root).as_posix()
            yield Candidate(key=f"{repo.key}/{rel}", payload={"repo": payload, "test_file": rel})


def build_candidate(candidate: Candidate, options: dict[str, Any]) -> Outcome:
    repo = repo_from_payload(candidate.payload["repo"])
    rel = candidate.payload["test_file"]
    path = repo.root / rel
    if not path.is_file():
        raise SourceError(f"{path} does not exist (was the cache cleared? rebuild the repository)")
    return build_test_file(repo, rel, path.read_text(encoding="utf-8"), options)


# --- analysis of the test-side modules ------------------------------------------------------

@dataclass
class Module:
    rel: str  # path relative to the repo root
    path: Path
    source: str
    functions: dict[tuple[str, int], A.TestFunction]


@dataclass
class Item:
    """One assertion of one test function, with its static DVP outcome."""

    key: str
    module: Module
    function: A.TestFunction
    assertion: A.Assertion
    choice: dvp.Choice | dvp.Reject


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
        for f_index, (key, function) in enumerate(sorted(module.functions.items(), key=lambda kv: kv[0][1])):
            text = A.segment(module.source, function.span)
            nondet[(module.rel, function.qualname)] = dvp.nondeterministic_token(text, function)
            for assertion in function.assertions:
                item_key = f"m{m_index}f{f_index}a{assertion.index}"
                items[item_key] = Item(item_key, module, function, assertion,
                                       dvp.choose(assertion, function, sympy=sympy))
    return items, nondet


# --- the pipeline for one test module --------------------------------------------------------

def build_test_file(repo: Repo, rel: str, source: str, options: dict[str, Any], *,
                    origin: str = "original") -> Outcome:
    """Tasks from the test module at ``rel`` whose text is ``source`` (the file's own text,
    or a mutated text for the same path: line numbers are those of ``source``).

    For ``origin != "original"`` (a mutated test whose expected values are stale) the probe
    run does not assert: the maskable assertions become probes (RepoReason D.4 stage 1),
    their values are captured, and the verify run re-checks each rebuilt assertion."""
    outcome = Outcome()
    label = f"{repo.key}/{rel}"
    test_path = repo.root / rel
    modules: list[Module] = []
    for path, text in [(test_path, source)] + [(p, p.read_text(encoding="utf-8")) for p in _helper_modules(repo, test_path)]:
        try:
            functions = A.test_functions(text)
        except SyntaxError as exc:
            if path == test_path:
                outcome.reject(label, "source", f"syntax error: {exc}")
                return outcome
            continue
        modules.append(Module(path.relative_to(repo.root).as_posix(), path, text, functions))
    sympy = repo.name.lower() == "sympy"
    items, nondet = _analyse(modules, sympy)
    probed = [(k, it) for k, it in items.items() if isinstance(it.choice, dvp.Choice)]
    served = {}
    for module in modules:
        mine = [(k, it.assertion) for k, it in probed if it.module is module]
        splices = A.probe_splices(module.source, mine)
        if origin != "original":
            splices += A.neutralize_splices([a for f in module.functions.values() for a in f.assertions])
        served[str(module.path)] = A.apply(module.source, splices)

    first = run_tests(repo, test_path, served, trace=True, options=options, hash_seed=0)
    if not first.ok and not first.records:
        outcome.reject(label, "execution", f"test run failed: {first.fatal or first.reason}",
                       output=first.stderr_tail[-1500:])
        return outcome
    by_function = {(str(Path(m.path).resolve()), fl): (m, f) for m in modules for (q, fl), f in m.functions.items()}
    pending: list[dict[str, Any]] = []  # per (test instance, item) awaiting verification
    instances: dict[tuple[str, str], int] = defaultdict(int)
    for record in first.records:
        nodeid = record["nodeid"]
        test_label = f"{repo.key}/{nodeid}"
        phases = record.get("phases", {})
        failed = [(w, p) for w, p in phases.items() if p["outcome"] != "passed"]
        if failed:
            when, phase = failed[0]
            outcome.reject(test_label, "execution", f"{phase['outcome']} in {when}: {phase.get('message', '')}".strip())
            continue
        fn = record.get("function")
        found = by_function.get((os.path.realpath(fn[0]), fn[1])) if fn else None
        if found is None:
            outcome.reject(test_label, "execution", "test function is not defined in the test module or its helpers")
            continue
        module, function = found
        trace = record.get("trace") or {}
        if trace.get("status") != "ok":
            reason = {"too_large": f"trace over the caps: {trace.get('too_large')}",
                      "no_entry": "test function not found in the trace"}.get(trace.get("status"), "no trace")
            outcome.reject(test_label, "execution", reason)
            continue
        if trace["score"] < options["threshold"]:
            outcome.reject(test_label, "selection", f"complexity score {trace['score']:.3f} < {options['threshold']}",
                           **trace["stats"])
            continue
        fkey = (module.rel, function.qualname)
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
            base = {"assertion": it.assertion.text[:500], "line": it.assertion.line}
            if token:
                outcome.reject(at, dvp.SEMANTIC, f"nondeterministic_in_test:{token}", **base)
                continue
            if isinstance(it.choice, dvp.Reject):
                outcome.reject(at, it.choice.stage, it.choice.reason, **base)
                continue
            runs = record.get("probes", {}).get(it.key)
            if not runs:
                outcome.reject(at, "execution", "assertion_not_reached", **base)
                continue
            if it.key in record.get("overflow", []):
                outcome.reject(at, dvp.SEMANTIC, "multiple_values: executed too often", **base)
                continue
            cands, why = _answer_candidates(it, runs, sympy)
            if why is not None:
                outcome.reject(at, why[0], why[1], **base)
                continue
            pending.append({"record": record, "item": it, "candidates": cands, "label": at, "base": base,
                            "values": runs})
    if not pending:
        return outcome

    # --- verification run -------------------------------------------------------------------
    verify_served = {}
    union: dict[str, list[str]] = defaultdict(list)
    for p in pending:
        for c in p["candidates"]:
            if c["text"] not in union[p["item"].key]:
                union[p["item"].key].append(c["text"])
    for module in modules:
        splices = []
        for key, texts in union.items():
            it = items[key]
            if it.module is module:
                splices.append(A.verify_splice(module.source, key, it.assertion, it.choice.masked, texts))
        if origin != "original":  # stale expected values elsewhere must not fail the test
            verified = {id(items[key].assertion) for key in union}
            splices += A.neutralize_splices([a for f in module.functions.values() for a in f.assertions
                                             if id(a) not in verified])
        verify_served[str(module.path)] = A.apply(module.source, splices)
    keep = sorted({p["record"]["nodeid"] for p in pending})
    second = run_tests(repo, test_path, verify_served, trace=False, options=options, keep=keep, hash_seed=1)
    by_node = {r["nodeid"]: r for r in second.records}
    admitted: list[dict[str, Any]] = []
    for p in pending:
        it, record = p["item"], p["record"]
        rec2 = by_node.get(record["nodeid"])
        if rec2 is None or any(ph["outcome"] != "passed" for ph in rec2.get("phases", {}).values()):
            why = "test did not pass in the verification run" if rec2 else f"verification run: {second.reason}"
            outcome.reject(p["label"], "verification", why, **p["base"])
            continue
        checks = rec2.get("verify", {}).get(it.key)
        if not checks:
            outcome.reject(p["label"], "verification", "assertion not reached in the verification run", **p["base"])
            continue
        actual_now = {json.dumps(_value_text(c["value"])) for c in checks}
        actual_before = {json.dumps(_value_text(run.get(str(it.choice.actual), {}))) for run in p["values"]}
        if actual_now != actual_before:
            outcome.reject(p["label"], dvp.SEMANTIC, "unstable_value: differs between runs (hash seeds 0 and 1)",
                           **p["base"])
            continue
        texts = union[it.key]
        chosen = None
        for cand in p["candidates"]:
            index = texts.index(cand["text"])
            if all(c["checks"][index] is True for c in checks):
                chosen = cand
                break
        if chosen is None:
            outcome.reject(p["label"], "verification", "no candidate answer passes the assertion when substituted",
                           candidates=[c["text"] for c in p["candidates"]], **p["base"])
            continue
        admitted.append({**p, "answer": chosen})
    _disambiguate(admitted, outcome)
    analysis, store = slice_cache(), TraceStore()
    for p in admitted:
        if p.get("dropped"):
            continue
        outcome.tasks.append(_task(repo, rel, modules, items, p, options, origin, analysis, store))
    return outcome


def _value_text(rendered: dict[str, Any]) -> str | None:
    return rendered.get("literal", rendered.get("sympy"))


def _answer_candidates(it: Item, runs: list[dict[str, Any]], sympy: bool
                       ) -> tuple[list[dict[str, Any]], tuple[str, str] | None]:
    """Answer texts to verify, best first: the actual operand's runtime value as a literal
    (or sympy text), the masked operand's runtime value, then the original masked text when
    its form passes funnel 2. The answer always comes from execution: text is only kept if
    substituting it makes the assertion pass."""
    choice = it.choice
    assert isinstance(choice, dvp.Choice)
    actual = [r.get(str(choice.actual), {}) for r in runs]
    expected = [r.get(str(choice.masked), {}) for r in runs]
    if any(not a for a in actual):
        return [], ("execution", "assertion_not_reached")
    kinds = {json.dumps(sorted((k, v) for k, v in a.items() if k in ("literal", "sympy", "type"))) for a in actual}
    if len(kinds) > 1:
        return [], (dvp.SEMANTIC, f"multiple_values: {len(runs)} executions disagree")
    value, masked_value = actual[0], expected[0]
    out: list[dict[str, Any]] = []

    def add(text: str | None, source: str, form: str, kind: str) -> None:
        if text is None or any(c["text"] == text for c in out):
            return
        try:
            ast.parse(text, mode="eval")
        except SyntaxError:
            return
        out.append({"text": text, "source": source, "form": form, "kind": kind, "type": value.get("type")})

    add(value.get("literal"), "runtime-value", "literal", "python-literal")
    if sympy:
        add(value.get("sympy"), "runtime-value", "sympy_expression", "sympy")
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
        if choice.variable:
            return [], (dvp.MORPHOLOGY, f"pure_variable_reference: no literal form for {value.get('type')}")
        if value.get("too_big"):
            return [], (dvp.MORPHOLOGY, "value_too_large")
        return [], (dvp.MORPHOLOGY, f"no_literal_form:{value.get('type')}")
    return clean, None


def _add_text(add: Callable[..., None], source: str, node: ast.expr, form: dvp.Form, origin: str) -> None:
    text = A.segment(source, node)
    text = " ".join(text.split()) if "\n" in text else text
    add(text, origin, form.name, "python-literal" if form.priority == 1 else "sympy" if form.priority == 5 else "text")


def _disambiguate(admitted: list[dict[str, Any]], outcome: Outcome) -> None:
    """Instances of one test function (parametrised or inherited) that show the same test
    text and the same input parameters must have the same answer, else none is kept."""
    groups: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for p in admitted:
        args = json.dumps(p["record"]["trace"].get("args", {}), sort_keys=True)
        groups[(p["item"].key, args)].append(p)
    for group in groups.values():
        if len({p["answer"]["text"] for p in group}) > 1:
            for p in group:
                p["dropped"] = True
                outcome.reject(p["label"], dvp.SEMANTIC,
                               "ambiguous_parameters: instances with the same inputs have different answers",
                               **p["base"])


# --- tasks -----------------------------------------------------------------------------------

def _definitions(it: Item) -> list[tuple[ast.expr, dvp.Form]]:
    """Right-hand sides assigned to the question's variable in the test function (none when
    the expected operand is not a plain variable), with their funnel-2 form."""
    choice = it.choice
    assert isinstance(choice, dvp.Choice)
    if not choice.variable:
        return []
    name = it.assertion.operands[choice.masked].id  # type: ignore[attr-defined]
    return [(node.value, dvp.classify(node.value, it.function.local_names)) for node in ast.walk(it.function.node)
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)]


def _hidden_spans(items: dict[str, Item], it: Item) -> list[A.Span]:
    """Expected operands of the function's other maskable assertions whose text shows a
    value (literals, constants, attributes, constructors; plain variable names show
    nothing), and literal right-hand sides bound to the question's variable (the answer
    would be visible)."""
    spans = []
    for other in items.values():
        if (other.function is it.function and other is not it and isinstance(other.choice, dvp.Choice)
                and not other.choice.variable):
            spans.append(A.Span.of(other.assertion.operands[other.choice.masked]))
    spans += [A.Span.of(value) for value, form in _definitions(it) if form.priority in (1, 2, 3, 4)]
    # Nested spans (a hidden operand inside another) would overlap: keep the outermost.
    spans.sort(key=lambda s: (s.lineno, s.col, -s.end_lineno, -s.end_col))
    kept: list[A.Span] = []
    for s in spans:
        if kept and (s.lineno, s.col) < (kept[-1].end_lineno, kept[-1].end_col):
            continue
        kept.append(s)
    return kept


def _safe(text: str) -> str:
    cleaned = re.sub(r"[\s#]+", "_", text)
    if cleaned != text:
        cleaned += "~" + hashlib.sha256(text.encode()).hexdigest()[:6]
    return cleaned


def _relative_calls(calls: list[dict[str, Any]], root: Path) -> list[dict[str, Any]]:
    out = []
    for call in calls:
        path = Path(call["file"])
        try:
            rel = path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            rel = call["file"]
        out.append({**call, "file": rel})
    return out


def _store_json(payload: Any) -> str:
    """Content-addressed, gzip'd JSON under ``cache_dir()/repos/traces/``; returns its path."""
    blob = json.dumps(payload, sort_keys=True).encode()
    digest = hashlib.sha256(blob).hexdigest()
    path = cache_dir() / "repos" / "traces" / f"{digest[:2]}" / f"{digest}.json.gz"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        with gzip.open(tmp, "wb", compresslevel=5) as fh:
            fh.write(blob)
        os.replace(tmp, path)
    return str(path)


class TraceStore:
    """Stores each test's call records once and each source file once, however many tasks
    share them; a task's ``trace_ref`` names a small index (see :func:`load_trace`)."""

    def __init__(self) -> None:
        self._calls: dict[str, str] = {}
        self._sources: dict[tuple[str, int, int], str] = {}
        self.memo: dict[str, tuple[list[dict[str, Any]], dict[str, str]]] = {}  # nodeid → (calls, sources)

    def put(self, nodeid: str, calls: list[dict[str, Any]], sources: dict[str, str], target: dict[str, Any],
            repo: str) -> str:
        if nodeid not in self._calls:
            self._calls[nodeid] = _store_json(calls)
        refs = {}
        for rel, text in sources.items():
            key = (rel, len(text), hash(text))
            if key not in self._sources:
                self._sources[key] = _store_json(text)
            refs[rel] = self._sources[key]
        return _store_json({"calls_ref": self._calls[nodeid], "source_refs": refs, "target": target,
                            "nodeid": nodeid, "repo": repo})


def _load_json(path: str) -> Any:
    with gzip.open(path, "rb") as fh:
        return json.loads(fh.read())


def load_trace(ref: str) -> dict[str, Any]:
    """A stored per-test trace: ``{"calls": [...], "sources": {rel: text}, "target": {...},
    "nodeid", "repo"}`` (calls' files and the sources' keys are relative to the repo root)."""
    data = _load_json(ref)
    if "calls_ref" in data:
        data["calls"] = _load_json(data.pop("calls_ref"))
        data["sources"] = {rel: _load_json(path) for rel, path in data.pop("source_refs").items()}
    return data


def slice_cache() -> Any:
    """One analysis cache shared by the slices of a test module (None without slicing)."""
    try:
        from execbench.slicing.analysis import AnalysisCache
    except ImportError:
        return None
    return AnalysisCache()


def slice_for(calls: list[dict[str, Any]], sources: dict[str, str], target: dict[str, Any],
              cache: Any = None) -> tuple[dict[str, Any] | None, str]:
    """``execbench.slicing.slice_metrics`` when available: (result, status)."""
    try:
        from execbench.slicing import slice_metrics
    except ImportError:
        return None, "slicing unavailable"
    try:
        if cache is not None:
            return slice_metrics(calls, sources, target, cache=cache), "ok"
        return slice_metrics(calls, sources, target), "ok"
    except Exception as exc:  # noqa: BLE001 - a slicer bug must not lose the task
        return None, f"slicing failed: {type(exc).__name__}: {str(exc)[:200]}"


def _task(repo: Repo, rel: str, modules: list[Module], items: dict[str, Item], p: dict[str, Any],
          options: dict[str, Any], origin: str, analysis: Any = None, store: TraceStore | None = None
          ) -> dict[str, Any]:
    it: Item = p["item"]
    record, answer = p["record"], p["answer"]
    choice = it.choice
    assert isinstance(choice, dvp.Choice)
    module, function, assertion = it.module, it.function, it.assertion
    nodeid = record["nodeid"]
    trace = record["trace"]
    masked_source = A.mask_text(module.source, function, (assertion, choice.masked), _hidden_spans(items, it))
    blank = A.statement_text(module.source, assertion, choice.masked)
    store = store or TraceStore()
    if nodeid not in store.memo:
        calls = _relative_calls(trace.get("calls", []), repo.root)
        sources: dict[str, str] = {}
        for call in calls:
            f = call["file"]
            if f not in sources:
                path = repo.root / f
                text = next((m.source for m in modules if m.rel == f), None)
                sources[f] = text if text is not None else (path.read_text(encoding="utf-8") if path.is_file() else "")
        store.memo[nodeid] = (calls, sources)
    calls, sources = store.memo[nodeid]
    expr = A.segment(module.source, assertion.operands[choice.masked])
    target = {"file": module.rel, "line": assertion.line, "expr": expr, "end_line": assertion.span.end_lineno,
              "function": function.qualname}
    sliced, slice_status = slice_for(calls, sources, target, analysis)
    trace_ref = store.put(nodeid, calls, sources, target, repo.spec)
    stats = trace["stats"]
    metrics: dict[str, float | int | None] = {
        "complexity_score": trace["score"], "n_files": stats["files"], "n_funcs": stats["funcs"],
        "n_calls": stats["calls"], "max_depth": stats["depth"], "answer_chars": len(answer["text"]),
        "esv": None, "mcl": None, "dfi": None, "slice_files": None,
    }
    if sliced:
        for name in ("esv", "mcl", "dfi"):
            value = sliced.get(name)
            metrics[name] = value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
        # reasoning scope (RepoReason B.1): 1 file = intra-file, more = cross-file
        metrics["slice_files"] = len(sliced.get("relevant_lines") or {}) or None
    case = f"{_safe(nodeid)}@L{assertion.line}"
    value_type = answer.get("type") or "object"
    fields = {
        "masked_assertion": blank,
        "test_source": masked_source,
        "test_context": A.context_text(module.source, function),
        "input_parameters": json.dumps(trace.get("args", {}), ensure_ascii=False),
        "answer_form": answer["form"],
        "answer_type": value_type,
        "library": repo.name,
        "package": repo.name,
        "version": repo.version,
        "repo_spec": repo.spec,
        "repo_root": str(repo.root),
        "test_file": rel,
        "function_file": module.rel,
        "test_id": nodeid,
        "function": function.qualname,
        "assertion_line": assertion.line,
    }
    provenance = {
        "origin": origin,
        "answer_source": answer["source"],
        "resolved_from_variable": choice.variable,
        "masked_operand": expr if len(expr) <= 2000 else expr[:2000] + "...",
        "masked_side": "left" if choice.masked == 0 else "right",
        "operator": assertion.op,
        "assertion_kind": assertion.kind + (f":{assertion.method}" if assertion.method else ""),
        "morphology": {"form": choice.form.name, "priority": choice.form.priority},
        "executions": len(p["values"]),
        "hash_seeds": [0, 1],
        "trace_ref": trace_ref,
        "slicing": slice_status,
        "slice": ({k: sliced.get(k) for k in ("relevant_calls", "relevant_lines", "source_variables") if k in sliced}
                  if sliced else None),
        "sdist_sha256": repo.sdist_sha256,
        "tree_sha256": repo.tree_sha256,
        "test_sha256": hashlib.sha256(module.source.encode()).hexdigest(),
        "trace_limits": {k: options[k] for k in ("max_depth", "max_calls", "max_line_events", "max_summary_bytes")},
        "threshold": options["threshold"],
        "pure_python": repo.config.note,
    }
    task = {
        "id": make_id("repo", repo.key, case, "masked-assertion"),
        "family": "repo",
        "arm": "masked-assertion",
        "source_id": f"{repo.key}/{module.rel}::{function.qualname}",
        "language": "python",
        "prompt_fields": fields,
        "answer": answer["text"],
        "answer_kind": answer["kind"],
        "metrics": metrics,
        "provenance": provenance,
    }
    return task
