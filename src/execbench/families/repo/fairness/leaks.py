"""The leak gate: a task is admitted only when its answer is not on the page.

Run at admission on everything the model is shown (the masked test function, the context
from the test file, the input-parameters line; the agent mode shows the same texts and
refuses the test file itself). The answer counts in its stored spelling and every spelling
the grader accepts (code is compared with :func:`compare.same`, the grader's equality;
comments and docstrings by text). Reasons, each ``answer_visible: <where>``:

``parametrize``
    the masked operand is a test parameter listed in a ``@pytest.mark.parametrize`` of
    the shown function (the expected column of the parameter list).
``input_parameters``
    the masked operand is a test parameter (a fixture or parametrised value) whose value
    the input-parameters line shows.
``expression``
    the shown (unmasked) side evaluates to the answer without running the code under
    test: only literals, names whose value is their literal (bound once to an immutable
    literal, or to a mutable one only assertions read), and pure builtins
    (``self.assertEqual(___, list(range(10)))``); or its value as :mod:`.static_eval`
    computes it (comprehensions, f-strings, arithmetic and repetition of literals) is the
    answer under the grader's equality (``ids == {'foo'} | {f'foo_{i}' for i in range(3)}``).
``definition``
    a literal (or an expression :mod:`.static_eval` computes) equal to the answer is bound, in the shown function, to a name that does not
    feed the asked expression and that nothing but assertions reads (a definition that only
    feeds assertions: the unittest ``expected = ...`` pattern when it is not the masked
    variable).
``context``
    a module- or class-level definition carried as context binds a literal equal to the
    answer to a name the asked expression does not read.
``comment``
    a comment or docstring of a shown text states the answer (by text only answers
    distinctive enough: numbers with at least two digits, strings of three or more
    characters, containers; never ``True``/``False``/``None`` or one digit; a shorter string
    in quotes, ``'12'``; a container by value, :func:`comment_stating`).

Every reason comes with the place that shows the answer (:func:`answer_visible_at`).

An answer equal to a genuine input (a round trip: ``assert decode(encode(x)) == x``) is fair:
literals inside the asked expression or in statements feeding it are not leaks.

A text's comments and docstrings are read once per text (:func:`_comments_and_docstrings`
is cached on the text): the agent's module copy is searched for every task of its module.
"""

from __future__ import annotations

import ast
import io
import json
import re
import tokenize
from functools import lru_cache
from typing import AbstractSet, Any, Iterable, Mapping

from execbench.families.repo.fairness import static_eval
from execbench.families.repo.fairness.touched import parametrize_names
from execbench.families.repo.selection.assertions import TestFunction, derived

PURE_BUILTINS = {"list", "tuple", "set", "frozenset", "dict", "sorted", "reversed", "range", "len", "str", "int",
                 "float", "bool", "bytes", "min", "max", "sum", "abs", "repr", "round", "divmod", "pow", "chr",
                 "ord", "hex", "bin", "oct", "enumerate", "zip", "any", "all", "complex", "bytearray"}
_STR_METHODS = {"join", "upper", "lower", "split", "strip", "replace", "format", "encode", "decode", "title",
                "capitalize", "center", "ljust", "rjust", "zfill", "splitlines", "lstrip", "rstrip"}


def _parse(text: str) -> tuple | None:
    from execbench.families.repo.grading.compare import Refused, parse_answer

    try:
        return parse_answer(text)
    except (Refused, RecursionError, ValueError, SyntaxError):
        return None


def _equal(node_text: str, want: tuple, names: Mapping[str, Any] | None = None, shadowed: Iterable[str] = ()) -> bool:
    """The shown text equals the answer: as the grader reads it, or by its static value
    (:mod:`.static_eval`: ``['neg'] * 5 + ['notneg'] * 5``, a comprehension over ``range``)."""
    from execbench.families.repo.grading.compare import same

    got = _parse(node_text)
    if got is not None:
        return same(got, want)
    try:
        node = ast.parse(node_text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return static_eval.equals(node, want, names, shadowed)


def _asserting(function: TestFunction) -> frozenset[int]:
    """ids of every node inside the function's assertion statements."""
    return derived(function, _asserting_ids)


def _asserting_ids(function: TestFunction) -> frozenset[int]:
    return frozenset(id(n) for a in function.assertions if a.node is not None for n in ast.walk(a.node))


def _loaded_outside(function: TestFunction, name: str, skip: AbstractSet[int]) -> bool:
    """``name`` is read somewhere in the function outside the nodes in ``skip``."""
    return any(i not in skip for i in derived(function, _loads).get(name, ()))


def _loads(function: TestFunction) -> dict[str, list[int]]:
    """Each name the function reads → the ids of its reading ``Name`` nodes."""
    out: dict[str, list[int]] = {}
    for n in ast.walk(function.node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            out.setdefault(n.id, []).append(id(n))
    return out


def _immutable(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp):
        return _immutable(node.operand)
    return isinstance(node, ast.Tuple) and all(_immutable(e) for e in node.elts)


def static_names(function: TestFunction) -> set[str]:
    """Names whose value is their literal: bound once to an immutable literal, or to a
    mutable one that nothing but assertions reads (no code under test can change it); the
    same for names bound once to an expression a reader computes (:func:`static_values`)."""
    return set(derived(function, _static_names))


def _static_names(function: TestFunction) -> frozenset[str]:
    asserting = _asserting(function)
    names = {name for name, value in literal_bindings(function).items()
             if _immutable(value) or not _loaded_outside(function, name, asserting)}
    return frozenset(names | {name for name, value in static_values(function).items()
                              if _frozen(value) or not _loaded_outside(function, name, asserting)})


def _frozen(value: Any) -> bool:
    if isinstance(value, (tuple, frozenset)):
        return all(_frozen(v) for v in value)
    return not isinstance(value, (list, set, dict))


def _single_bindings(function: TestFunction) -> tuple[dict[str, int], list[ast.Assign]]:
    """How often each name is bound in the function, and its one-name assignments in source order
    (computed once per function: read only)."""
    return derived(function, _count_bindings)


def _count_bindings(function: TestFunction) -> tuple[dict[str, int], list[ast.Assign]]:
    counts: dict[str, int] = {}
    assigns = []
    for sub in ast.walk(function.node):
        targets = (sub.targets if isinstance(sub, ast.Assign) else [sub.target]
                   if isinstance(sub, (ast.AugAssign, ast.AnnAssign, ast.For, ast.NamedExpr)) else [])
        for target in targets:
            for n in ast.walk(target):
                if isinstance(n, ast.Name):
                    counts[n.id] = counts.get(n.id, 0) + 1
        if isinstance(sub, ast.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0], ast.Name):
            assigns.append(sub)
    return counts, sorted(assigns, key=lambda a: (a.lineno, a.col_offset))


def static_values(function: TestFunction) -> dict[str, Any]:
    """Names bound exactly once in the function to an expression a reader computes without the
    library (:func:`static_eval.static_value`, over the names bound before it), with their value:
    ``expected = ['neg'] * 5 + ['notneg'] * 5``. A new dict per call (the values are computed once
    per function and never changed)."""
    return dict(derived(function, _static_values))


def _static_values(function: TestFunction) -> dict[str, Any]:
    counts, assigns = _single_bindings(function)
    values: dict[str, Any] = {}
    for a in assigns:
        name = a.targets[0].id  # type: ignore[attr-defined]  # one Name target (checked in _single_bindings)
        if counts.get(name) != 1:
            continue
        ok, value = static_eval.try_value(a.value, values, function.local_names - set(values))
        if ok:
            values[name] = value
    return values


def literal_bindings(function: TestFunction) -> dict[str, ast.expr]:
    """Names bound exactly once in the function, to a literal expression."""
    from execbench.families.repo.selection import dvp

    counts, assigns = _single_bindings(function)
    return {a.targets[0].id: a.value for a in assigns  # type: ignore[attr-defined]  # one Name target
            if counts.get(a.targets[0].id) == 1 and dvp._is_literal(a.value)}  # type: ignore[attr-defined]


def readable_expression(node: ast.expr, literal_names: Iterable[str], local_names: set[str]) -> bool:
    """True when ``node`` is made only of literals, names bound once to literals and pure
    builtins (not shadowed in the test), so its value needs none of the code under test."""
    names = set(literal_names)
    has_call_or_literal = False
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            if n.id in names:
                continue
            if n.id in PURE_BUILTINS and n.id not in local_names:
                continue
            return False
        if isinstance(n, ast.Attribute):
            if not (isinstance(n.value, ast.Constant) and isinstance(n.value.value, (str, bytes))
                    and n.attr in _STR_METHODS):
                return False
        if isinstance(n, (ast.Lambda, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr, ast.Starred)):
            return False
        if isinstance(n, (ast.Call, ast.Constant, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.BinOp)):
            has_call_or_literal = True
    return has_call_or_literal


def _distinctive_texts(answer: str) -> list[str]:
    """Texts of the answer a comment or docstring could state (see the module doc)."""
    try:
        tree = ast.parse(answer, mode="eval").body
    except SyntaxError:
        return []
    out = []
    if isinstance(tree, ast.Constant) or (isinstance(tree, ast.UnaryOp) and isinstance(tree.operand, ast.Constant)):
        try:
            value = ast.literal_eval(tree)
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            return []
        if isinstance(value, bool) or value is None:
            return []
        if isinstance(value, (int, float)):
            text = repr(value)
            return [text] if len(text.lstrip("-")) >= 2 else []
        if isinstance(value, str):
            return [value, answer] if len(value.strip()) >= 3 else []
        if isinstance(value, bytes):
            return [answer] if len(value) >= 3 else []
        return [answer]
    if len(answer) >= 3:
        out.append(re.sub(r"\s+", "", answer))
    return out


@lru_cache(maxsize=16)
def _comments_and_docstrings(text: str) -> tuple[tuple[str, str], ...]:
    """Comment texts and docstring-like string statements of a shown code text, each with its
    whitespace-free spelling; once per text."""
    return tuple((comment, re.sub(r"\s+", "", comment)) for comment in _comment_texts(text))


def _comment_texts(text: str) -> list[str]:
    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                out.append(tok.string)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        out += re.findall(r"#[^\n]*", text)
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return out
    for n in ast.walk(tree):
        if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str):
            out.append(n.value.value)
    return out


def in_comments(answer: str, texts: Iterable[str], *, words_quoted: bool = False) -> bool:
    """The answer stands in a comment or docstring of ``texts``. With ``words_quoted`` a
    one-word string answer counts only in its quoted spelling: across a whole test module
    (the agent's copy) a bare ``host`` or ``path`` is English about other tests."""
    return comment_stating(answer, texts, words_quoted=words_quoted) is not None


def _short_string(answer: str) -> str | None:
    """A string answer too short to be searched as text (``'12'``, ``'a'``), else None."""
    try:
        value = ast.literal_eval(answer.strip())
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return None
    return value if isinstance(value, str) and value.strip() and len(value.strip()) < 3 else None


def comment_stating(answer: str, texts: Iterable[str], *, words_quoted: bool = False) -> str | None:
    """The comment or docstring of ``texts`` that states the answer, or None: by text (the
    answer's distinctive spellings, :func:`_distinctive_texts`), a string of any length in
    quotes (``converts to '12' at midnight``; not in the agent's whole-module copy, where
    ``'a'`` is common prose), and by value: a bracketed literal of the comment that the grader
    reads as the answer (``# -> {'b': 2, 'a': 1}`` for ``{'a': 1, 'b': 2}``)."""
    texts = list(texts)
    spellings = _distinctive_texts(answer)
    if words_quoted and len(spellings) == 2 and re.fullmatch(r"\w+", spellings[0]):
        spellings = spellings[1:]
    searches = []  # per spelling: (search the squeezed comment?, the pattern)
    for s in spellings:
        # word boundaries only where the spelling has a word edge: a squeezed comment
        # ("gives[3,2,1]") still states a container
        before = r"(?<![\w.])" if re.match(r"[\w.]", s) else ""
        after = r"(?![\w])" if re.search(r"\w$", s) else ""
        searches.append((not re.match(r"^[\w.-]+$", s) and " " not in s, re.compile(before + re.escape(s) + after)))
    short = None if words_quoted else _short_string(answer)
    if short is not None:
        searches.append((False, re.compile("|".join(re.escape(q + short + q) for q in ("'", '"', "`")))))
    want = _parse(answer) if spellings and answer.lstrip()[:1] in "[{(" else None
    for text in texts:
        for comment, squeezed in _comments_and_docstrings(text):
            for use_squeezed, pattern in searches:
                if pattern.search(squeezed if use_squeezed else comment):
                    return comment
            if want is not None and any(_equal(group, want) for group in _bracketed(comment)):
                return comment
    return None


def _bracketed(comment: str, limit: int = 20) -> list[str]:
    """Outermost bracketed groups of a comment (at most ``limit``, each under 2,000 characters)."""
    out: list[str] = []
    start = 0
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack: list[str] = []
    for i, ch in enumerate(comment[:20_000]):
        if ch in pairs:
            if not stack:
                start = i
            stack.append(pairs[ch])
        elif stack and ch == stack[-1]:
            stack.pop()
            if not stack and i - start < 2000:
                out.append(comment[start:i + 1])
                if len(out) >= limit:
                    break
        elif ch in ")]}":
            stack = []
    return out


def parametrized(function: TestFunction) -> set[str]:
    """Argument names of the function's ``@pytest.mark.parametrize`` decorators."""
    return parametrize_names(function.node.decorator_list)


def answer_visible(*, function: TestFunction, source: str, masked: ast.expr, actual: ast.expr, answer: str,
                   inputs: set[str], hidden: list[Any], input_parameters: str, shown_texts: Iterable[str],
                   context_nodes: Iterable[tuple[str, ast.stmt]] = ()) -> str | None:
    """The ``answer_visible`` reason for a task (module doc), or None when the answer is not shown
    (:func:`answer_visible_at` without the place)."""
    found = answer_visible_at(function=function, source=source, masked=masked, actual=actual, answer=answer,
                              inputs=inputs, hidden=hidden, input_parameters=input_parameters,
                              shown_texts=shown_texts, context_nodes=context_nodes)
    return found[0] if found else None


def answer_visible_at(*, function: TestFunction, source: str, masked: ast.expr, actual: ast.expr, answer: str,
                      inputs: set[str], hidden: list[Any], input_parameters: str, shown_texts: Iterable[str],
                      context_nodes: Iterable[tuple[str, ast.stmt]] = ()) -> tuple[str, str] | None:
    """(the ``answer_visible`` reason, the place that shows the answer: ``line N: <text>``, the
    constant's name or the comment), or None when the answer is not shown.

    ``masked``/``actual`` are the assertion's operands; ``inputs`` the names the actual
    operand depends on in the function; ``hidden`` the spans masked in the shown function;
    ``context_nodes`` (name, statement) of the context carried from the test file."""
    from execbench.families.repo.selection.assertions import segment

    def at(node: ast.AST) -> str:
        return f"line {getattr(node, 'lineno', '?')}: {segment(source, node)[:120]}"

    want = _parse(answer)
    params = {a.arg for a in [*function.node.args.posonlyargs, *function.node.args.args,
                              *function.node.args.kwonlyargs]}
    if isinstance(masked, ast.Name) and masked.id in params and masked.id not in inputs:
        if masked.id in parametrized(function):
            return "answer_visible: parametrize", f"parameter {masked.id}"
        try:
            shown = json.loads(input_parameters)
        except ValueError:
            shown = {}
        value = shown.get(masked.id) if isinstance(shown, dict) else None
        if isinstance(value, str) and want is not None and (value == answer or _equal(value, want)):
            return "answer_visible: input_parameters", f"parameter {masked.id}"
    static = static_names(function)
    values = {k: v for k, v in static_values(function).items() if k in static}
    if readable_expression(actual, static, function.local_names - static) or (
            want is not None and static_eval.equals(actual, want, values, function.local_names - set(values))):
        return "answer_visible: expression", at(actual)
    if want is not None:
        found = _definition_or_context(function, source, want, inputs, set(hidden), values, context_nodes)
        if found:
            return found
    comment = comment_stating(answer, shown_texts)
    if comment is not None:
        return "answer_visible: comment", comment[:120]
    return None


def _definition_or_context(function: TestFunction, source: str, want: tuple, inputs: set[str], hidden_set: set,
                           values: dict[str, Any], context_nodes: Iterable[tuple[str, ast.stmt]]
                           ) -> tuple[str, str] | None:
    """``definition``: a shown binding that only feeds assertions holds the answer (as a literal
    or a value a reader computes); ``context``: a carried constant the asked computation does
    not read holds it."""
    from execbench.families.repo.selection.assertions import Span, segment

    asserting = _asserting(function)
    shadowed = function.local_names - set(values)
    for stmt in ast.walk(function.node):
        if not isinstance(stmt, (ast.Assign, ast.AnnAssign)) or stmt.value is None:
            continue
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        bound = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        if not bound or bound & inputs or Span.of(stmt.value) in hidden_set:
            continue
        if any(_loaded_outside(function, name, asserting | {id(n) for n in ast.walk(stmt)}) for name in bound):
            continue  # read by other code too: not a definition that only feeds assertions
        shown = [stmt.value] + (list(stmt.value.elts) if isinstance(stmt.value, (ast.Tuple, ast.List))
                                and any(isinstance(t, (ast.Tuple, ast.List)) for t in targets) else [])
        for v in shown:
            if Span.of(v) not in hidden_set and (_equal(segment(source, v), want)
                                                 or static_eval.equals(v, want, values, shadowed)):
                return "answer_visible: definition", f"line {stmt.lineno}: {segment(source, stmt)[:120]}"
    for name, stmt in context_nodes:
        value = getattr(stmt, "value", None)
        if value is None or name.rsplit(".", 1)[-1] in inputs:
            continue
        if _equal(ast.unparse(value), want):
            return "answer_visible: context", name
    return None
