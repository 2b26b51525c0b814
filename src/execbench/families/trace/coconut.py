"""CoCoNUT's own listing, prompts and scoring (``--set layout=coconut``, ``--variant coconut``).

execbench's default trace tasks show the HumanEval prompt followed by the canonical solution
and grade full traces (docs/trace-format.md). The CoCoNUT paper (002) showed its models a
different listing and scored a different key; this module reproduces both, from the
authors' repository (github:seal-research/structural-code-understanding-dataset at
0b964d7), so a number made with ``--variant coconut`` can be set beside the paper's
Tables I and II. Every rule below was checked on the authors' published rows
(``benchmarks/coconut_tables.py``; figures in ``benchmarks/RESULTS.md``).

Listing (``coconut_listing``, the authors' ``prepare_solution_function``)
    The prompt's literal ``\\n`` become line breaks (HumanEval/51's docstring), a blank line
    follows every line starting with ``def`` outside a ``\"\"\"`` docstring (a line holding
    ``\"\"\"`` toggles "inside"), and the canonical solution follows after one more line
    break. The paper numbers that text, so its traces' line numbers follow it.

Key (``key_tokens``)
    The task's answer with every run of consecutive equal items collapsed
    (``itertools.groupby``: the paper's "NoReps" files, which its tables are computed
    from); a concurrent segment contributes the tokens ``(``, its lines, ``)``. The key's
    text is ``str(list)``: ``[14, 15, 16]``.

Prediction (``prediction_text``)
    ``coconut``: the paper's ``extract_last_python_list`` (the last ``[...]`` that opens and
    closes on one line), else the reply unchanged; ``coconut-direct``: the reply unchanged
    (the paper stored direct replies as written, code fences included). ``<think>`` blocks
    are removed first. The text is never evaluated: it is compared as text, and for
    concurrency read by execbench's bounded literal parser.

Match and similarity (``score``)
    HumanEval / OOP / recursion: correct iff ``prediction == str(key)``; similarity
    ``difflib.SequenceMatcher(a=",".join(key_text), b=",".join(prediction)).ratio()``
    (characters, a comma between each, default autojunk). Concurrency, as published
    (``calculate_distance_concurrency`` never finds its segment marker): both sides become
    token lists (``(``/``)`` as tokens, quoted numbers as their text, an unreadable
    prediction as ``[]``), similarity is the plain ratio of ``",".join(tokens)``, correct
    iff it is 1.0. A prediction that is not a list still gets its similarity.

Concurrency keys: observed or canonical (``segments``)
    The paper's data store the one interleaving its tracer observed, and as published the
    order inside a segment counts (``segments="observed"``: how the published rows are
    graded, ``benchmarks/coconut_tables.py``, whose tasks say
    ``provenance.segment_order = "observed"``). What the paper says (§II-B: segments are
    sorted before comparing), what its prompt tells the model ("you can pick any valid
    combination") and what its unused ``calculate_match_concurrency`` does (a set compare)
    is that the order inside a segment does not count. execbench's built keys hold each
    segment sorted (an interleaving is a property of one run, not of the program), so they
    are graded that way (``segments="canonical"``, every built task): on both sides a
    segment becomes ``(``, its distinct lines in ascending order, ``)`` (doubled
    parentheses inside flattened); the rest is as above.

Aggregation (``paper_summary``)
    Table I (HumanEval): per task (``source_id``) mean correct, mean similarity, mean
    similarity of its wrong rows (0 when none), all correct; each averaged over tasks:
    Acc Mean, Sim, False Sim, Acc Hard. Table II (every other topic): means over rows.

Prompts (``prompt_text``)
    The repository has no license file, so its text is not shipped: the prompts are read
    from a local clone named by ``$EXECBENCH_COCONUT_REPO`` (its ``prompts.py``, parsed
    with ``ast``, never imported), checked against the sha256 of the published text, and
    filled exactly as the authors' ``generate_trace.py`` does. The listing filled in is
    the paper's for the topic: HumanEval ``code  # N`` (``annotate``), the advanced topics
    their ``Code_Indices`` (``coconut_advanced.code_indices``: stripped, comments cut,
    ``code # N``).
"""

from __future__ import annotations

import ast
import hashlib
import itertools
import os
import re
from difflib import SequenceMatcher
from pathlib import Path
from typing import Iterable, Mapping, NotRequired, TypedDict

from execbench.errors import InternalError
from execbench.families.trace.coconut_advanced import code_indices
from execbench.grading import NO_ANSWER, OK, Score, strip_reasoning

LAYOUTS = ("execbench", "coconut")
VARIANT = "coconut"  # CoT reply: the last one-line list is the prediction
DIRECT_VARIANT = "coconut-direct"  # reply scored as written
VARIANTS = (VARIANT, DIRECT_VARIANT)
REPO_ENV = "EXECBENCH_COCONUT_REPO"
CONCURRENCY = "concurrency"
SEGMENT_ORDERS = ("canonical", "observed")  # built keys (sorted segments) / the paper's published rows
# traces per topic in the paper (§III: HumanEval-Trace 1,083; Advanced: 66, 40, 20 programs x 5)
PAPER_TRACES = {"humaneval": 1083, "recursion": 330, "oop": 200, "concurrency": 100}
MAX_TEXT = 1_000_000  # characters of a reply looked at
_FIELD = re.compile(r"\{([012])\}")
_CONCURRENCY_TOKEN = re.compile(r"\d+|[()]|\.\.\.|\u2026|Ellipsis|[\s,]+")
MAX_PARSE = 200_000  # characters of a concurrency prediction handed to the literal parser

# sha256 of each prompt string in prompts.py at 0b964d717da05fb70aca9246f4bec01ac8944bc9
# (a hash, not the text: the repository has no license)
PROMPT_SHA256 = {
    "HumanEval": "68bd520c8f6d689e0ac7384826519eb4411b9ce6bdcebfba9d05b913a83a145d",
    "Recursion": "51b986b7ef067588a2edcb26897998b0f34c5a8c92f7694e8b76f6c23c41a30d",
    "OOP": "51b986b7ef067588a2edcb26897998b0f34c5a8c92f7694e8b76f6c23c41a30d",
    "Concurrency": "c731904668efaf2042431c9714cdd018c1efd203cb62d464fd08f3b5a6ebbf82",
}
# task topic -> the key of PROMPTS in prompts.py
PROMPT_KEYS = {"humaneval": "HumanEval", "recursion": "Recursion", "oop": "OOP", "concurrency": "Concurrency"}


class CoconutError(InternalError, ValueError):
    """The paper's prompts cannot be read (no clone given, or not the published text)."""


# ---------------------------------------------------------------- listing


def coconut_listing(prompt: str, solution: str) -> str:
    """The program as CoCoNUT showed it (the authors' ``prepare_solution_function``)."""
    prompt = prompt.replace("\\n", "\n")
    solution = solution.replace("\\n", "\n")
    lines: list[str] = []
    in_docstring = False
    for line in prompt.split("\n"):
        lines.append(line)
        if '"""' in line:
            in_docstring = not in_docstring
        if not in_docstring and line.strip().startswith("def"):
            lines.append("")
    lines.append(solution)
    return "\n".join(lines)


def annotate(program: str) -> str:
    """The listing with the paper's line annotations (``code  # N``; its ``Code_Indices``)."""
    return "\n".join(f"{line}  # {number}" for number, line in enumerate(program.split("\n"), 1))


# ---------------------------------------------------------------- key


def key_tokens(answer: list, segments: str = "observed") -> list:
    """The NoReps key: ints and ``(``/``)`` tokens, consecutive repeats collapsed; with
    ``segments="canonical"`` a segment holds its distinct lines in ascending order."""
    tokens: list = []
    for item in answer:
        if isinstance(item, list):
            tokens += ["(", *(sorted(set(item)) if segments == "canonical" else item), ")"]
        else:
            tokens.append(item)
    return [token for token, _ in itertools.groupby(tokens)]


def key_text(tokens: list) -> str:
    return "[" + ", ".join(map(str, tokens)) + "]"


# ---------------------------------------------------------------- prediction


def last_line_list(text: str) -> str | None:
    """``re.findall(r"\\[.*?\\]", text)[-1]`` in one linear pass (no regex backtracking):
    a match runs from a ``[`` to the first ``]`` after it on the same line."""
    found = None
    pos, n = 0, len(text)
    while pos < n:
        start = text.find("[", pos)
        if start < 0:
            break
        newline = text.find("\n", start)
        line_end = n if newline < 0 else newline
        end = text.find("]", start, line_end)
        if end < 0:
            pos = line_end + 1  # no "]" later on this line: no match starts on it after start
            continue
        found = (start, end + 1)
        pos = end + 1
    return text[found[0]:found[1]] if found else None


def prediction_text(response: str, variant: str = VARIANT) -> str:
    text = strip_reasoning(response)[:MAX_TEXT]
    if variant == DIRECT_VARIANT:
        return text
    found = last_line_list(text)
    return text if found is None else found


def concurrency_tokens(text: str) -> list[str]:
    """A concurrency list as the paper's distances read it: numbers, ``(``, ``)``, ``...``
    (any of ``...``, ``…``, ``Ellipsis``: read as Python's ``Ellipsis``), and the
    comma-separated parts of a quoted string, in order; so ``['(', '25, 11', ')']`` (how
    the published files re-wrote some replies) reads as ``(, 25, 11, )``, as the authors'
    distances did. Text that is not one ``[...]`` of such tokens reads as ``[]`` (the
    paper's failed parse). A linear scan; nothing is evaluated."""
    text = text.strip()
    if len(text) > MAX_PARSE or not (text.startswith("[") and text.endswith("]")):
        return []
    inner, tokens, pos = text[1:-1], [], 0
    while pos < len(inner):
        char = inner[pos]
        if char in "'\"":
            end = inner.find(char, pos + 1)
            if end < 0:
                return []
            tokens += [part.strip() for part in inner[pos + 1:end].split(",") if part.strip()]
            pos = end + 1
            continue
        match = _CONCURRENCY_TOKEN.match(inner, pos)
        if match is None:
            return []
        token = match.group()
        if token.strip(", \t\n"):
            tokens.append("Ellipsis" if token in ("...", "\u2026") else token)
        pos = match.end()
    return tokens


def canonical_segments(tokens: list[str]) -> list[str]:
    """Prediction tokens with each top-level ``(`` … ``)`` holding its distinct numbers in
    ascending order (nested parentheses flattened into it; an unclosed one runs to the end
    and stays unclosed; other tokens inside, such as ``Ellipsis``, are dropped)."""
    out: list[str] = []
    depth, inside = 0, set[int]()
    for token in tokens:
        if token == "(":
            if depth == 0:
                out.append("(")
                inside = set[int]()
            depth += 1
        elif token == ")" and depth:
            depth -= 1
            if depth == 0:
                out += [str(n) for n in sorted(inside)] + [")"]
        elif depth:
            if token.isdigit():
                inside.add(int(token))
        else:
            out.append(token)
    if depth:
        out += [str(n) for n in sorted(inside)]
    return out


def char_ratio(a: str, b: str) -> float:
    return SequenceMatcher(a=a, b=b).ratio()


def score(answer: list, response: str, variant: str = VARIANT, concurrent: bool = False,
          segments: str = "observed") -> Score:
    """Grade one reply the paper's way (module doc); ``details`` holds the key's text.
    ``segments``: ``observed`` (the paper's published rows: order inside a segment counts)
    or ``canonical`` (execbench's built keys: it does not)."""
    if not isinstance(response, str):
        response = ""
    key = key_tokens(answer, segments if concurrent else "observed")
    want = key_text(key)
    got = prediction_text(response, variant)
    if concurrent:
        predicted = concurrency_tokens(got)
        if segments == "canonical":
            predicted = canonical_segments(predicted)
        similarity = char_ratio(",".join(map(str, key)), ",".join(predicted))
        correct = similarity == 1.0
    else:
        similarity = char_ratio(",".join(want), ",".join(got))
        correct = got == want
    listed = got.startswith("[") and got.endswith("]")
    details = {"scoring": variant, "key": want, "concurrent": concurrent}
    if concurrent:
        details["segments"] = segments
    return Score(correct, OK if listed else NO_ANSWER, got, similarity, details)


# ---------------------------------------------------------------- aggregation


class PaperRow(TypedDict):
    """One scored task for :func:`paper_summary` (``topic`` None: HumanEval)."""

    topic: str | None
    task_group: str
    correct: bool
    similarity: float | None


class Table1(TypedDict):
    rows: int
    tasks: int
    acc_hard: float
    acc_mean: float
    sim: float
    false_sim: float


class Table2(TypedDict):
    rows: int
    acc: float
    sim: float


class PaperSummary(TypedDict):
    scoring: str
    table_1: NotRequired[Table1]  # when HumanEval rows are there
    table_2: NotRequired[dict[str, Table2]]  # per other topic


def paper_summary(rows: Iterable[PaperRow]) -> PaperSummary:
    """Tables I and II from rows with ``topic``, ``task_group``, ``correct``, ``similarity``.

    ``table_1`` (topic ``humaneval``): acc_hard, acc_mean, sim, false_sim over tasks;
    ``table_2``: per other topic, acc (mean over rows) and sim (mean over rows)."""
    by_topic: dict[str, list[PaperRow]] = {}
    for row in rows:
        by_topic.setdefault(str(row.get("topic") or "humaneval"), []).append(row)
    out: PaperSummary = {"scoring": VARIANT}
    he = by_topic.pop("humaneval", [])
    if he:
        out["table_1"] = table_1(he)
    if by_topic:
        out["table_2"] = {topic: table_2(group) for topic, group in sorted(by_topic.items())}
    return out


def table_1(rows: list[PaperRow]) -> Table1:
    tasks: dict[str, list[tuple[bool, float]]] = {}
    for row in rows:
        tasks.setdefault(str(row["task_group"]), []).append((bool(row["correct"]), float(row["similarity"] or 0.0)))
    acc_mean = sim = false_sim = hard = 0.0
    for group in tasks.values():
        acc_mean += sum(c for c, _ in group) / len(group)
        sim += sum(s for _, s in group) / len(group)
        wrong = [s for c, s in group if not c]
        false_sim += sum(wrong) / len(wrong) if wrong else 0.0
        hard += all(c for c, _ in group)
    k = len(tasks)
    return {"rows": len(rows), "tasks": k, "acc_hard": hard / k, "acc_mean": acc_mean / k,
            "sim": sim / k, "false_sim": false_sim / k}


def table_2(rows: list[PaperRow]) -> Table2:
    n = len(rows)
    return {"rows": n, "acc": sum(bool(r["correct"]) for r in rows) / n,
            "sim": sum(float(r["similarity"] or 0.0) for r in rows) / n}


# ---------------------------------------------------------------- prompts


def read_prompts(repo: str | Path | None = None) -> dict[str, str]:
    """``PROMPTS`` of the clone's ``prompts.py`` (string assignments and aliases read with
    ``ast``), each checked against :data:`PROMPT_SHA256`."""
    where = repo if repo is not None else os.environ.get(REPO_ENV)
    if not where:
        raise CoconutError(f"--variant coconut renders the CoCoNUT authors' prompts, which execbench does not ship "
                           f"(their repository has no license): clone "
                           f"github.com/seal-research/structural-code-understanding-dataset and set {REPO_ENV} to it")
    path = Path(where) / "prompts.py"
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError) as exc:
        raise CoconutError(f"cannot read the CoCoNUT prompts from {path}: {exc}") from None
    prompts: dict[str, str] = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        target = node.targets[0]
        if not (isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant)
                and isinstance(target.slice.value, str)):
            continue
        name, value = target.slice.value, node.value
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            prompts[name] = value.value
        elif isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Constant):
            if isinstance(value.slice.value, str) and value.slice.value in prompts:
                prompts[name] = prompts[value.slice.value]
    for name, digest in PROMPT_SHA256.items():
        text = prompts.get(name)
        if text is None or hashlib.sha256(text.encode()).hexdigest() != digest:
            raise CoconutError(f"{path}: PROMPTS[{name!r}] is not the published text (commit 0b964d7)")
    return prompts


def prompt_text(program: str, topic: str, call: str | None, entry_point: str | None,
                prompts: Mapping[str, str]) -> str:
    """The paper's prompt for one task, filled as ``generate_trace.py`` does:
    ``PROMPTS[topic].format(Code_Indices, Name, FunctionCall)``."""
    key = PROMPT_KEYS.get(topic, "Recursion")
    arguments = ""
    if call is not None and entry_point and call.startswith(entry_point + "(") and call.endswith(")"):
        arguments = call[len(entry_point) + 1:-1]
    shown = annotate(program) if key == "HumanEval" else code_indices(program)
    fields = (shown, entry_point or "", arguments)
    # the fields by position, as str.format fills them (the checked texts hold no other braces)
    return _FIELD.sub(lambda m: fields[int(m.group(1))], prompts[key])
