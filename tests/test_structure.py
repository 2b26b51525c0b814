"""Structure checks beyond the layers (issue 36), read with ``ast`` (nothing is imported):

- every exception class of ``src/execbench`` derives from ``execbench.errors.ExecbenchError``
  (through ``UserError`` or ``InternalError``), but the few listed in ``ROOTLESS`` with why;
- builder-side code keeps no mutable module-level state: no module-level dict/list/set that a
  function mutates (or rebinds with ``global``), here or through another module; a build's state
  travels in its ``contract.BuildContext`` (sandbox children, which run in their own process, excepted);
- no module outside ``dataset/`` reads a manifest as a raw dict (``read_manifest``): readers use
  the typed ``Manifest`` (``load_manifest``);
- every doc path named in ``docs/*.md``, ``README.md``, the package's modules and the benchmark
  scripts exists.

Each check is a function of the files it reads, and each has a test that it sees a planted violation.
"""

from __future__ import annotations

import ast
import builtins
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "execbench"

ROOT_CLASSES = {"ExecbenchError", "InternalError", "UserError"}
#: exception classes that do not derive from ExecbenchError, and why
ROOTLESS = {
    ("tracing/tracer.py", "TracerTampered"): "BaseException on purpose: code under test must not catch it",
    ("tracing/tracer.py", "TraceCapExceeded"): "BaseException on purpose: code under test must not catch it",
    ("families/repo/grading/sympy_parse.py", "_InProcessTimeout"): "BaseException on purpose: sympy code must not catch it",
    ("families/repo/grading/_answer_eval.py", "Refused"): "shipped as a file into a package's venv, which has no execbench",
}
BUILTIN_EXCEPTIONS = {name for name, value in vars(builtins).items()
                      if isinstance(value, type) and issubclass(value, BaseException)}

#: builder-side packages (what runs when a dataset is built) checked for module-level state
BUILDER_SIDE = ("contract", "dataset", "sources", "families", "mutation", "tracing", "slicing", "grading")
#: modules that run in a sandboxed child process of their own (one job, one process): excepted
SANDBOX_CHILDREN = {"families/repo/verification/_plugin.py", "families/repo/grading/_answer_eval.py", "tracing/tracer.py",
                    "tracing/child.py", "tracing/freshcall.py"}
MUTABLE_CALLS = {"dict", "list", "set", "defaultdict", "Counter", "OrderedDict", "deque"}
MUTATORS = {"append", "extend", "update", "add", "clear", "pop", "popitem", "setdefault", "insert", "remove",
            "discard"}


def modules() -> dict[str, str]:
    """``{path relative to src/execbench: text}`` of the package's modules (the state corpora's
    programs under ``data/`` are benchmark inputs, not execbench's code)."""
    return {path.relative_to(SRC).as_posix(): path.read_text(encoding="utf-8")
            for path in sorted(SRC.rglob("*.py")) if path.relative_to(SRC).parts[0] != "data"}


def _name(node: ast.expr) -> str | None:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None


# -- 1. one exception root ----------------------------------------------------------------------

def rootless_exceptions(sources: dict[str, str]) -> list[tuple[str, str]]:
    """(module, class) of every exception class that does not derive from ExecbenchError. A class's
    bases are resolved by name: its module's own classes first, then any module's class of that name."""
    classes: dict[tuple[str, str], list[str]] = {}
    for rel, text in sources.items():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef):
                classes[(rel, node.name)] = [name for base in node.bases if (name := _name(base))]
    by_name: dict[str, list[tuple[str, str]]] = {}
    for key in classes:
        by_name.setdefault(key[1], []).append(key)

    def kinds(key: tuple[str, str], seen: frozenset[tuple[str, str]] = frozenset()) -> set[str]:
        """"rooted" and/or "exception" for the class ``key`` (empty: not an exception class)."""
        found: set[str] = set()
        for base in classes[key]:
            if base in ROOT_CLASSES:
                found |= {"rooted", "exception"}
            elif base in BUILTIN_EXCEPTIONS:
                found.add("exception")
            else:
                own = (key[0], base)
                for target in ([own] if own in classes else by_name.get(base, [])):
                    if target not in seen and target != key:
                        found |= kinds(target, seen | {key})
        return found

    return sorted(key for key in classes if key[1] not in ROOT_CLASSES and "exception" in (found := kinds(key))
                  and "rooted" not in found)


def test_every_exception_derives_from_the_one_root():
    found = rootless_exceptions(modules())
    assert [key for key in found if key not in ROOTLESS] == []
    assert sorted(ROOTLESS) == [key for key in found if key in ROOTLESS]  # the list only names what is left


def test_the_root_check_sees_a_planted_violation():
    planted = {"a.py": "class Mine(ValueError):\n    pass\n\nclass Derived(Mine):\n    pass\n\n"
                       "class Fine(InternalError, ValueError):\n    pass\n\nclass Plain:\n    pass\n",
               "b.py": "from a import Fine\n\nclass AlsoFine(Fine):\n    pass\n\nclass User(UserError):\n    pass\n"}
    assert rootless_exceptions(planted) == [("a.py", "Derived"), ("a.py", "Mine")]


def test_user_errors_and_internal_errors_share_the_root():
    from execbench.dataset import DatasetError
    from execbench.errors import ExecbenchError, InternalError
    from execbench.sandbox import SandboxError
    from execbench.usererror import UserError

    assert issubclass(UserError, ExecbenchError) and issubclass(UserError, ValueError)
    assert issubclass(DatasetError, UserError) and not issubclass(DatasetError, InternalError)
    assert issubclass(SandboxError, InternalError) and issubclass(SandboxError, RuntimeError)
    assert not issubclass(SandboxError, UserError)


# -- 2. no module-level mutable state in builder-side code --------------------------------------

def _module_containers(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        targets = (node.targets if isinstance(node, ast.Assign)
                   else [node.target] if isinstance(node, ast.AnnAssign) and node.value is not None else [])
        value = getattr(node, "value", None)
        mutable = isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)) or (
            isinstance(value, ast.Call) and _name(value.func) in MUTABLE_CALLS)
        if mutable:
            names |= {target.id for target in targets if isinstance(target, ast.Name)}
    return names


def module_state(sources: dict[str, str]) -> list[str]:
    """``module:line name`` of every mutation, inside a function, of a module-level container of
    builder-side code (its own module's, or another's through ``module.NAME``), and every ``global``."""
    checked = {rel: ast.parse(text) for rel, text in sources.items()
               if rel.split("/")[0] in BUILDER_SIDE and rel not in SANDBOX_CHILDREN}
    own = {rel: _module_containers(tree) for rel, tree in checked.items()}
    anywhere = {name for names in own.values() for name in names}
    found = []
    for rel, tree in checked.items():
        functions = [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
        for function in functions:
            for node in ast.walk(function):
                hit: str | None = None
                if isinstance(node, ast.Global):
                    hit = ",".join(node.names)
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
                    hit = _mutated(node.func.value, own[rel], anywhere)
                elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
                    targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
                    hit = next((name for t in targets if isinstance(t, ast.Subscript)
                                and (name := _mutated(t.value, own[rel], anywhere))), None)
                if hit:
                    found.append(f"{rel}:{node.lineno} {hit}")
    return sorted(set(found))


def _mutated(target: ast.expr, own: set[str], anywhere: set[str]) -> str | None:
    """The module-level container ``target`` is: ``NAME`` of this module, or ``module.NAME`` of another."""
    if isinstance(target, ast.Name) and target.id in own:
        return target.id
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.attr in anywhere:
        return f"{target.value.id}.{target.attr}"
    return None


def test_builder_side_code_keeps_no_module_level_state():
    assert module_state(modules()) == []


def test_the_state_check_sees_a_planted_violation():
    planted = {
        "families/x/build.py": "PREPARED: dict = {}\nTABLE = {'a': 1}\nTABLE['b'] = 2\n\n"
                               "def candidates():\n    PREPARED['k'] = 1\n    return TABLE['a']\n",
        "families/x/other.py": "from families.x import build\nSEEN = []\n\n"
                               "def f():\n    build.PREPARED.clear()\n    local = []\n    local.append(1)\n\n"
                               "def g():\n    global COUNT\n    COUNT = 1\n",
        "eval/y.py": "TASKS = {}\n\ndef add(t):\n    TASKS[t] = t\n",  # not builder-side
        "families/repo/verification/_plugin.py": "SEEN = set()\n\ndef f(x):\n    SEEN.add(x)\n",  # a sandbox child
    }
    assert module_state(planted) == ["families/x/build.py:6 PREPARED", "families/x/other.py:10 COUNT",
                                     "families/x/other.py:5 build.PREPARED"]


# -- 3. manifests are read typed ----------------------------------------------------------------

def raw_manifest_readers(sources: dict[str, str]) -> list[str]:
    """Modules outside ``dataset/`` that import or call ``read_manifest`` (the raw JSON object)
    instead of ``load_manifest`` (a ``Manifest``)."""
    found = []
    for rel, text in sources.items():
        if rel.startswith("dataset/"):
            continue
        for node in ast.walk(ast.parse(text)):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.ImportFrom)
                     else [_name(node.func)] if isinstance(node, ast.Call) else [])
            if "read_manifest" in names:
                found.append(f"{rel}:{node.lineno}")
    return sorted(set(found))


def test_manifest_readers_use_the_typed_manifest():
    assert raw_manifest_readers(modules()) == []


def test_the_manifest_check_sees_a_planted_violation():
    planted = {"eval/x.py": "from execbench.dataset import read_manifest\n\ndef f(d):\n    return read_manifest(d)\n",
               "analysis/y.py": "from execbench import dataset\n\ndef f(d):\n    return dataset.read_manifest(d)\n",
               "report/z.py": "from execbench.dataset import load_manifest\n\ndef f(d):\n    return load_manifest(d)\n",
               "dataset/store.py": "def read_manifest(d):\n    return {}\n\ndef g(d):\n    return read_manifest(d)\n"}
    assert raw_manifest_readers(planted) == ["analysis/y.py:4", "eval/x.py:1", "eval/x.py:4"]


# -- 4. every doc a doc or the code names exists ------------------------------------------------

DOC_PATH = re.compile(r"(?<![\w/.-])((?:docs|benchmarks)/[\w./-]+?\.md)\b")
LINK = re.compile(r"\]\(([^)\s#]+\.md)(?:#[^)]*)?\)")


def named_docs(texts: dict[str, str]) -> list[tuple[str, str]]:
    """(where, path) of every ``docs/….md`` or ``benchmarks/….md`` named in ``texts`` (paths relative
    to the repository root), and every Markdown link to a ``.md`` file (relative to the linking file)."""
    found = []
    for where, text in texts.items():
        found += [(where, path) for path in DOC_PATH.findall(text)]
        if where.endswith(".md"):
            base = Path(where).parent
            found += [(where, (base / link).as_posix()) for link in LINK.findall(text)
                      if "://" not in link and not link.startswith("docs/") and not link.startswith("benchmarks/")]
    return found


def missing_docs(texts: dict[str, str], root: Path) -> list[str]:
    return sorted({f"{where} names {path}" for where, path in named_docs(texts)
                   if not (root / Path(path)).resolve().is_file()})


def doc_texts() -> dict[str, str]:
    """``docs/*.md``, ``README.md``, every module of the package (its docstrings, comments, help and
    error texts) and the benchmark scripts, by their path from the repository root."""
    texts = {path.relative_to(ROOT).as_posix(): path.read_text(encoding="utf-8")
             for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
                          *sorted((ROOT / "benchmarks").glob("*.py"))]}
    texts.update({f"src/execbench/{rel}": text for rel, text in modules().items()})
    return texts


def test_every_named_doc_exists():
    texts = doc_texts()
    assert len(texts) > 100 and "docs/architecture.md" in texts
    assert missing_docs(texts, ROOT) == []


def test_the_doc_check_sees_a_planted_violation(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "here.md").write_text("x")
    texts = {"README.md": "See [here](docs/here.md) and docs/gone.md, not xdocs/other.md.",
             "docs/a.md": "See [here](here.md) and [there](there.md#part), [web](https://x.org/y.md).",
             "src/execbench/m.py": "Format: docs/dataset-missing.md; benchmarks/RESULTS.md."}
    assert missing_docs(texts, tmp_path) == ["README.md names docs/gone.md", "docs/a.md names docs/there.md",
                                             "src/execbench/m.py names benchmarks/RESULTS.md",
                                             "src/execbench/m.py names docs/dataset-missing.md"]


def test_the_cli_tells_a_users_mistake_from_a_bug_by_the_root(monkeypatch, tmp_path):
    """UserError: one ``error:`` line, exit 2; any other ExecbenchError (an InternalError): a bug, exit 70."""
    import tempfile

    from typer.testing import CliRunner

    from execbench import cli
    from execbench.dataset import DatasetError
    from execbench.errors import InternalError
    from execbench.families import build as engine

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    for error, code, said in ((DatasetError("your file is wrong"), 2, "error: your file is wrong"),
                              (InternalError("our state is wrong"), cli.INTERNAL_ERROR,
                               "internal error: InternalError: our state is wrong")):
        def broken(*args, _error=error, **kwargs):
            raise _error

        monkeypatch.setattr(engine, "build_dataset", broken)
        result = CliRunner().invoke(cli.app, ["build", "trace", "humaneval", "-o", str(tmp_path / "o")])
        assert result.exit_code == code
        assert said in " ".join(result.output.split())
