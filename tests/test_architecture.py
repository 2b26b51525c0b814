"""The package import graph follows the house's one-way flow (docs/architecture.md).

Read with ``ast`` (nothing is imported): every ``execbench`` import, at module level or
inside a function, counts, and so does a load by name (a string constant naming an ``execbench``
module, as ``importlib.import_module`` or an entry point is given: the registry's built-in table).
A package may import only from its own layer's package or from
lower layers; family folders do not import each other; imports form no cycle, counting
those inside functions and by name; no module outside ``families/<name>/`` holds a family's or an arm's
name as a string constant (the families declare their facts on their plug-ins).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "execbench"

FAMILY_FOLDER = "families/<name>"  # the layer of every family folder (a package under families/)

# Lowest first. A package imports only from packages in lower layers (and from itself).
LAYERS: tuple[frozenset[str], ...] = tuple(frozenset(layer) for layer in (
    {"errors"},  # the one exception root (imports nothing; issue 36)
    {"sourcetext", "static", "progress", "astlock", "familyhelp", "jsontypes", "usererror"},  # small helpers without execbench imports
    {"sandbox"},  # the only place that starts code under test
    {"tracing", "slicing"},  # run inside the sandbox / read its traces
    {"dataset", "grading"},  # the task record; family-neutral answer parsing
    {"sources"},  # where programs come from
    {"models"},  # model names, the local server, the teacher client
    {"contract"},  # the plug-in contract, the build-cache key, hash seeds, the JSON type
    {"families"},  # the build engine, its Ray executor, grading a dataset, templates
    {"mutation"},  # new facts from existing tasks: the family-neutral engine and AST operators
    {FAMILY_FOLDER},  # families/<name>/: the plug-ins themselves (with their mutation adapters)
    {"registry"},  # finds a family by name (loads its folder): above every plug-in, below their users
    {"eval"},  # Inspect AI
    {"analysis"},
    {"report"},
    {"cli", "__init__", "__main__"},
))
# modules of families/ that every family may use
FAMILY_SHARED = {"__init__", "build", "distributed", "grade", "templates"}


def layer_of(package: str) -> int:
    for index, layer in enumerate(LAYERS):
        if package in layer:
            return index
    raise AssertionError(f"execbench.{package} has no layer: add it to LAYERS and docs/architecture.md")


def package_of(module: str) -> str:
    """The layer key of ``execbench.<package>...``: family folders share one key."""
    parts = module.split(".")
    if len(parts) < 2:
        return "__init__"
    if parts[1] == "families" and len(parts) > 2 and (SRC / "families" / parts[2]).is_dir():
        return FAMILY_FOLDER
    return parts[1]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def by_name_loads(tree: ast.Module) -> set[str]:
    """The execbench modules a module names in a string constant (not a docstring): what it may
    load by name (``importlib.import_module(name)``, a ``module:attribute`` table of plug-ins)."""
    skip = _docstrings(tree)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip \
                and re.fullmatch(r"execbench(\.\w+)+(:[\w.]+)?", node.value):
            module = node.value.partition(":")[0]
            if _exists(module):
                found.add(module)
    return found


def imports(path: Path, top_level_only: bool = False) -> set[str]:
    """Absolute names of the execbench modules (or packages) that ``path`` imports; unless
    ``top_level_only``, also those it imports inside functions or loads by name."""
    tree = ast.parse(path.read_text(), str(path))
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    nodes = tree.body if top_level_only else ast.walk(tree)
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.split(".")[0] == "execbench"}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            if base.split(".")[0] != "execbench":
                continue
            for alias in node.names:  # `from execbench.x import y`: y may be a module
                candidate = f"{base}.{alias.name}"
                found.add(candidate if _exists(candidate) else base)
    return found if top_level_only else found | by_name_loads(tree)


def _exists(module: str) -> bool:
    path = SRC.parent.joinpath(*module.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def sources() -> list[Path]:
    return sorted(SRC.rglob("*.py"))


def test_imports_follow_the_layers():
    against = []
    for path in sources():
        own_package = package_of(module_name(path))
        for target in imports(path):
            package = package_of(target)
            if len(target.split(".")) < 2 or package == own_package:
                continue
            if layer_of(package) >= layer_of(own_package):
                against.append(f"{module_name(path)} imports {target}")
    assert against == []


def crossings(module: str, targets: set[str]) -> list[str]:
    """The imports of ``module`` (any depth inside its family folder: its rooms count as the
    folder) that reach into another family's folder."""
    mine = module.split(".")
    if len(mine) < 3 or mine[2] in FAMILY_SHARED:
        return []
    found = []
    for target in sorted(targets):
        parts = target.split(".")
        if parts[:2] == ["execbench", "families"] and len(parts) > 2 and parts[2] not in FAMILY_SHARED \
                and parts[2] != mine[2]:
            found.append(f"{module} imports {target}")
    return found


def test_family_folders_do_not_import_each_other():
    crossing = []
    for path in sorted((SRC / "families").rglob("*.py")):
        crossing += crossings(module_name(path), imports(path))
    assert crossing == []


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def import_graph(top_level_only: bool) -> dict[str, set[str]]:
    """module → the execbench modules it imports. A module importing its own package
    (``from execbench.contract import hashseeds`` inside ``contract/``) is the ordinary package
    pattern (the package is imported first anyway), not a cycle."""
    graph = {module_name(path): {t for t in imports(path, top_level_only) if t != module_name(path)}
             for path in sources()}
    return {m: {t for t in targets if not m.startswith(t + ".")} for m, targets in graph.items()}


def test_no_circular_module_level_imports():
    assert find_cycle(import_graph(top_level_only=True)) is None


def test_no_circular_imports_even_inside_functions():
    """An import inside a function, or a load by name, is still an edge: deferring it hides a
    cycle from the interpreter, not from the design. (The registry's by-name loads of the family
    folders are edges: it sits above them, and nothing they import imports it.)"""
    assert find_cycle(import_graph(top_level_only=False)) is None


def test_the_registry_loads_every_built_in_family_by_name_and_is_seen_to():
    from execbench import registry

    loaded = imports(SRC / "registry.py")
    assert {location.partition(":")[0] for location in registry._BUILTIN.values()} <= loaded
    assert layer_of("registry") > layer_of(FAMILY_FOLDER)


def test_the_engines_run_without_the_registry(tmp_path):
    """At run time too: the contract, the engines and a plug-in load without the registry (a
    fresh interpreter, so no other test's imports count)."""
    script = ("import sys\n"
              "import execbench.contract, execbench.families.build, execbench.families.distributed\n"
              "import execbench.families.grade, execbench.mutation.engine, execbench.mutation.cli\n"
              "import execbench.families.trace, execbench.families.state, execbench.families.repo\n"
              "import execbench.families.cruxeval, execbench.families.repo.mutation.edme\n"
              "print(sorted(m for m in sys.modules if m == 'execbench.registry'))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert done.stdout.strip() == "[]"


def test_the_contract_imports_none_of_its_users():
    users = {"families", FAMILY_FOLDER, "mutation", "registry", "eval", "analysis", "report", "cli"}
    found = [f"{module_name(path)} imports {target}" for path in sorted((SRC / "contract").rglob("*.py"))
             for target in imports(path) if package_of(target) in users]
    assert found == []


def test_the_checks_see_a_violation():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert layer_of("families") > layer_of("sandbox")
    assert package_of("execbench.families.trace.mutate") == FAMILY_FOLDER
    assert layer_of(package_of("execbench.mutation.engine")) < layer_of(FAMILY_FOLDER) \
        < layer_of(package_of("execbench.eval.protocol"))
    assert layer_of(package_of("execbench.contract.plugin")) < layer_of(package_of("execbench.families.build")) \
        < layer_of(package_of("execbench.mutation.engine"))
    tracer = SRC / "tracing" / "run.py"
    assert "execbench.sandbox" in {".".join(t.split(".")[:2]) for t in imports(tracer)}
    # a load by name is an edge: the contract loading a family folder would close a cycle
    planted = ast.parse('"""Loads execbench.families.repo."""\nimport importlib\n\n'
                        'def load():\n    return importlib.import_module("execbench.families.repo")\n'
                        'TABLE = {"x": "execbench.families.trace:FAMILY", "y": "execbench.nowhere"}\n')
    assert by_name_loads(planted) == {"execbench.families.repo", "execbench.families.trace"}


# -- family facts stay in their folders ---------------------------------------------------------
# Modules outside families/<name>/ that may hold a family's or an arm's name as a string literal,
# each with the literal and why. Keep it minimal.
LITERAL_ALLOWED: dict[tuple[str, str], str] = {
    ("execbench.registry", "trace"): "the registry: one line per built-in family is how it is added",
    ("execbench.registry", "state"): "the registry",
    ("execbench.registry", "repo"): "the registry",
    ("execbench.registry", "cruxeval"): "the registry",
    ("execbench.tracing.run", "trace"): "the sandbox job id of a single tracer run, not the family",
    **{("execbench.familyhelp", name): "the CLI's help table, one line per built-in family (checked against the "
                                       "plug-ins by tests/contract/test_registry.py)"
       for name in ("trace", "state", "repo", "cruxeval")},
}


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the docstring constants of a module, its classes and functions."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                found.add(id(first.value))
    return found


def named_literals(path: Path, names: set[str]) -> list[tuple[int, str]]:
    """(line, literal) of every string constant in ``path`` equal to one of ``names``
    (comments and docstrings do not count)."""
    tree = ast.parse(path.read_text(), str(path))
    skip = _docstrings(tree)
    return sorted((node.lineno, node.value) for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names
                  and id(node) not in skip)


def family_and_arm_names() -> set[str]:
    from execbench import registry

    return {name for family in registry.registered() for name in (family.name, *family.arms)}


def in_a_family_folder(path: Path) -> bool:
    return package_of(module_name(path)) == FAMILY_FOLDER


def test_no_family_or_arm_named_outside_its_folder():
    names = family_and_arm_names()
    found = []
    for path in sources():
        if in_a_family_folder(path):
            continue
        for line, literal in named_literals(path, names):
            if (module_name(path), literal) not in LITERAL_ALLOWED:
                found.append(f"{path.relative_to(SRC.parent)}:{line}: {literal!r}")
    assert found == [], "family facts belong on the Family plug-in (families/<name>/__init__.py)"


def test_the_literal_check_catches_a_planted_name(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text('"""About the trace family."""\n\n'
                       '# the "state" family\n'
                       'def f(task):\n'
                       '    """Only for "repo" tasks."""\n'
                       '    return task.family == "trace" or task.arm in ("inside-loop-state", f"{task}")\n')
    names = family_and_arm_names()
    assert {"trace", "state", "repo", "inside-loop-state"} <= names
    assert named_literals(planted, names) == [(6, "inside-loop-state"), (6, "trace")]
    assert in_a_family_folder(SRC / "families" / "trace" / "mutate.py")
    assert not in_a_family_folder(SRC / "families" / "build.py")


# -- small functions ----------------------------------------------------------------------------
MAX_FUNCTION_LINES = 100  # a longer function is split into named steps (issue 25)


def long_functions(path: Path, limit: int = MAX_FUNCTION_LINES) -> list[tuple[str, int]]:
    """(name, lines) of every function or method in ``path`` longer than ``limit`` lines
    (from its ``def`` line to its last line; decorators and nested functions included)."""
    tree = ast.parse(path.read_text(), str(path))
    return [(node.name, node.end_lineno - node.lineno + 1) for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno is not None
            and node.end_lineno - node.lineno + 1 > limit]


def test_no_function_is_longer_than_100_lines():
    found = [f"{path.relative_to(SRC.parent)}: {name} ({lines} lines)"
             for path in sources() for name, lines in long_functions(path)]
    assert found == [], "split them into named steps"


def test_the_length_check_counts_lines(tmp_path):
    planted = tmp_path / "planted.py"
    lines = [f"x{i} = {i}" for i in range(99)]
    planted.write_text("def short():\n" + "".join(f"    {line}\n" for line in lines)  # 100 lines: allowed
                       + "\n\nclass C:\n    def long(self):\n" + "".join(f"        {line}\n" for line in lines)
                       + "        y = 1\n")
    assert long_functions(planted) == [("long", 101)]


# -- rooms a newcomer can find ------------------------------------------------------------------
MAX_MODULE_LINES = 800  # a longer module is split along its seams into modules named for what they hold (issue 36)
# Modules still over the limit, each with why. The list only shrinks: a listed module that is no longer
# over the limit must be removed from it (the test says so).
MODULES_LEFT: dict[str, str] = {}


def long_modules(paths: list[Path], limit: int = MAX_MODULE_LINES) -> list[tuple[Path, int]]:
    """(path, lines) of every module in ``paths`` longer than ``limit`` lines."""
    found = []
    for path in paths:
        lines = len(path.read_text().splitlines())
        if lines > limit:
            found.append((path, lines))
    return found


def test_no_module_is_longer_than_800_lines():
    over = {path.relative_to(SRC).as_posix(): lines for path, lines in long_modules(sources())}
    new = [f"{name} ({lines} lines)" for name, lines in sorted(over.items()) if name not in MODULES_LEFT]
    assert new == [], "split them along their seams (docs/architecture.md, \"Rooms\")"
    gone = sorted(name for name in MODULES_LEFT if name not in over)
    assert gone == [], "no longer over the limit: remove these from MODULES_LEFT (the list only shrinks)"


def test_the_module_size_check_counts_lines(tmp_path):
    at_limit, over = tmp_path / "at_limit.py", tmp_path / "over.py"
    at_limit.write_text("".join(f"x{i} = {i}\n" for i in range(MAX_MODULE_LINES)))  # 800 lines: allowed
    over.write_text(at_limit.read_text() + "y = 1\n")
    assert long_modules([at_limit, over]) == [(over, MAX_MODULE_LINES + 1)]


def test_family_rooms_are_checked_like_their_folder():
    """A family folder's sub-packages (its rooms) belong to the folder: the layer, literal and
    crossing checks see them as the folder's modules."""
    nested = SRC / "families" / "repo" / "selection" / "dvp.py"
    assert nested.exists() and in_a_family_folder(nested)
    assert package_of(module_name(nested)) == FAMILY_FOLDER
    assert module_name(nested.parent / "__init__.py") == "execbench.families.repo.selection"
    # a room importing another family's room is a crossing; its own rooms and the engines are not
    assert crossings("execbench.families.repo.selection.dvp", {
        "execbench.families.trace.taxonomy", "execbench.families.state.records.x", "execbench.families.repo.records.steps",
        "execbench.families.build", "execbench.contract"}) == [
        "execbench.families.repo.selection.dvp imports execbench.families.state.records.x",
        "execbench.families.repo.selection.dvp imports execbench.families.trace.taxonomy"]


def room_of(module: str) -> str:
    """A family folder's room (``execbench.families.repo.selection``) for a module inside it; any
    other module stands for itself (a family folder's top-level modules are rooms of their own)."""
    parts = module.split(".")
    if len(parts) > 4 and parts[1] == "families" and (SRC / "families" / parts[2] / parts[3]).is_dir():
        return ".".join(parts[:4])
    return module


def room_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The import graph of the family folders' rooms: an edge where some module of one room imports
    one of another."""
    rooms: dict[str, set[str]] = {}
    for module, targets in graph.items():
        if package_of(module) != FAMILY_FOLDER:
            continue
        mine = room_of(module)
        rooms.setdefault(mine, set()).update(
            room_of(t) for t in targets if package_of(t) == FAMILY_FOLDER and room_of(t) != mine)
    return rooms


def test_family_rooms_import_each_other_one_way():
    """Rooms are stages: a lower one never imports a higher one (imports inside functions count)."""
    assert find_cycle(room_graph(import_graph(top_level_only=False))) is None


def test_the_room_check_sees_a_circle_between_rooms():
    planted = {"execbench.families.repo.selection.dvp": {"execbench.families.repo.records.steps"},
               "execbench.families.repo.records.steps": {"execbench.families.repo.selection.assertions"},
               "execbench.families.repo.selection.assertions": set()}
    assert find_cycle(planted) is None  # no circle between modules ...
    assert find_cycle(room_graph(planted)) == [  # ... but one between their rooms
        "execbench.families.repo.records", "execbench.families.repo.selection", "execbench.families.repo.records"]


# -- family vocabulary stays in its folder ------------------------------------------------------
# The consumers of the families name none of their metrics, arms, slices or layouts: they ask the
# plug-in (its ``AnalysisFacts``: metrics, labels, slice columns, sections). Docstrings and comments may.
CONSUMERS = ("analysis", "report", "dataset", "eval", "grading", "cli")
# Family words besides what the families declare (names of papers' metrics and tables).
OBVIOUS_FAMILY_WORDS = {"coconut", "esv", "mcl", "dfi", "state_load", "peak_state", "trace_length", "checkpoint",
                        "humaneval", "slice_files", "intra-file", "cross-file", "repository-wide", "complexity_score"}
NEUTRAL_METRICS = {"cyclomatic", "loc"}  # static metrics of any program (execbench.static), not a family's
# report layouts built only from what a family declares (AnalysisFacts.slice_tables; .taxonomy, .length_metric, ...)
NEUTRAL_LAYOUTS = {"slice-tables", "sequence"}


def family_vocabulary() -> set[str]:
    """The metric, arm, layout and slice-value words the families declare, plus the obvious ones."""
    from execbench import registry
    from execbench.contract import AnalysisFacts, PaperScoring

    words = set(OBVIOUS_FAMILY_WORDS)
    for family in registry.registered():
        words.update(family.arms)
        paper = family.capability(PaperScoring)
        if paper is not None:
            words.update(paper.variants, paper.trace_counts)
        facts = family.capability(AnalysisFacts)
        if facts is None:
            continue
        words.update(facts.metrics, facts.correlation_metrics, facts.theta_metrics, facts.cell_order)
        words.add(facts.layout)
        words.update(name for metric, others in facts.metric_fallbacks.items() for name in (metric, *others))
        words.update(p for _, predictors in facts.logistic_models for p in predictors)
    names = {family.name for family in registry.registered()}  # names: test_no_family_or_arm_named_outside_its_folder
    return {word.lower() for word in words} - NEUTRAL_METRICS - NEUTRAL_LAYOUTS - names


def _word_pattern(words: set[str]) -> re.Pattern[str]:
    """A word of ``words`` not inside a longer word (``_`` and ``-`` separate words; a plural s counts)."""
    alternatives = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    return re.compile(rf"(?<![a-z0-9])({alternatives})s?(?![a-z0-9])")


def vocabulary_places(path: Path, pattern: re.Pattern[str]) -> list[tuple[int, str]]:
    """(line, word) of every family word in ``path``'s identifiers and string constants (not its
    docstrings or comments), once per line and word."""
    tree = ast.parse(path.read_text(), str(path))
    skip = _docstrings(tree)
    found = set()
    for node in ast.walk(tree):
        texts: list[str] = []
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            texts.append(node.value)
        elif isinstance(node, ast.Name):
            texts.append(node.id)
        elif isinstance(node, ast.Attribute):
            texts.append(node.attr)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            texts.append(node.name)
        elif isinstance(node, ast.arg):
            texts.append(node.arg)
        elif isinstance(node, ast.keyword) and node.arg:
            texts.append(node.arg)
        elif isinstance(node, ast.alias):
            texts.append(node.asname or node.name)
        for text in texts:
            found.update((node.lineno, match.group(1)) for match in pattern.finditer(text.lower()))
    return sorted(found)


def consumer_vocabulary() -> dict[tuple[str, str], list[int]]:
    """(module, word) -> lines, over the consumer packages."""
    pattern = _word_pattern(family_vocabulary())
    places: dict[tuple[str, str], list[int]] = {}
    for path in sources():
        if package_of(module_name(path)).split(".")[-1] not in CONSUMERS:
            continue
        for line, word in vocabulary_places(path, pattern):
            places.setdefault((module_name(path), word), []).append(line)
    return places


# What is left (issue 25): (module, word) pairs still naming a family's vocabulary, with why. The
# list only shrinks: a pair that no longer occurs must be removed from it (the test says so).
VOCABULARY_LEFT: dict[tuple[str, str], str] = {}


def test_consumers_name_no_family_vocabulary():
    places = consumer_vocabulary()
    print(f"family vocabulary in consumer packages: {sum(map(len, places.values()))} places, "
          f"{len(places)} (module, word) pairs")
    for (module, word), lines in sorted(places.items()):
        print(f"  {module}: {word!r} at {lines}")
    new = [f"{module}: {word!r} at lines {lines}" for (module, word), lines in sorted(places.items())
           if (module, word) not in VOCABULARY_LEFT]
    assert new == [], "family vocabulary belongs on the Family plug-in (its AnalysisFacts), not in its consumers"
    gone = sorted(pair for pair in VOCABULARY_LEFT if pair not in places)
    assert gone == [], "no longer found: remove these from VOCABULARY_LEFT (the list only shrinks)"


def test_the_vocabulary_check_catches_a_planted_word(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text('"""The ESV metric."""\n\n'
                       '# esv and mcl\n'
                       'def esv_table(rows, peak_states):\n'
                       '    """mcl"""\n'
                       '    return rows["mcl"], f"{rows} dfi", rows.esv_value, "esvx", "concurrency"\n')
    pattern = _word_pattern(family_vocabulary())
    assert vocabulary_places(planted, pattern) == [
        (4, "esv"), (4, "peak_state"), (6, "concurrency"), (6, "dfi"), (6, "esv"), (6, "mcl")]
