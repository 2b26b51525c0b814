"""The task record of one admitted assertion: its prompt fields, context, answer, metrics and provenance.

Split out of :mod:`.build`: :func:`_task` assembles a record from a pending assertion that
passed every gate (the carried context, the hidden spans, the difficulty metrics, the trace).
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, TypedDict

from execbench.contract import Outcome, hashseeds
from execbench.dataset import make_id
from execbench.families.repo.fairness import agent_copy, context, leaks, touched
from execbench.families.repo.fairness.difficulty import _metrics_unless_trivial
from execbench.families.repo.fairness.masking import _hidden_spans, _inputs
from execbench.families.repo.records.slicing_metrics import slice_for, slice_provenance
from execbench.families.repo.records.steps import (DEFAULT_OPTIONS, AnswerCandidate, Item, Module, Pending, RepoOptions,
                                                   RepoPromptFields, SliceTarget)
from execbench.families.repo.records.traces import TraceStore
from execbench.families.repo.selection import assertions as A
from execbench.families.repo.selection import balance, dvp
from execbench.families.repo.verification.answers import _trace
from execbench.sources import repos
from execbench.sources.repos import Repo

if TYPE_CHECKING:
    from execbench.families.repo.records.slicing_metrics import SliceProvenance


def _library_check(repo: Repo) -> Callable[[str], bool]:
    """Whether a path of the tree (relative to its root) is one of the library's modules."""
    files = _library_set(_library_paths(repo.root, repo.import_root, repo.packages, repo.tree_sha256))
    return lambda rel: rel in files


@functools.lru_cache(maxsize=8)
def _library_set(paths: tuple[tuple[str, str], ...]) -> frozenset[str]:
    return frozenset(rel for rel, _ in paths)


@functools.lru_cache(maxsize=8)  # a few repositories at a time per process (asked twice per task)
def _library_paths(root: Path, import_root: Path, packages: tuple[str, ...], tree_sha256: str
                   ) -> tuple[tuple[str, str], ...]:
    """The library's modules, (path relative to ``root``, absolute path), sorted; ``tree_sha256``
    keys the cache on the tree's content too (a local checkout edited between two builds of one
    process is listed again)."""
    return tuple((p.relative_to(root).as_posix(), str(p))
                 for p in sorted(repos.library_files(root, import_root, packages)))


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
    return balance.data_tables(_library_paths(repo.root, repo.import_root, repo.packages, repo.tree_sha256))


def _safe(text: str) -> str:
    cleaned = re.sub(r"[\s#]+", "_", text)
    if cleaned != text:
        cleaned += "~" + hashlib.sha256(text.encode()).hexdigest()[:6]
    return cleaned


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
    definitions: list[context.Definition] = []  # filled by _carried_context (with the fixtures the run used)
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
