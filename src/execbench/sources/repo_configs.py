"""How each library is built into tasks: its configuration, pinned for the default corpus or
inferred from its tree.

The paper's seven libraries (RepoReason table 5) are pinned in :data:`DEFAULT_CORPUS`; any
other spec's configuration is inferred (:func:`infer_config`). Test dependencies are PEP 508
requirements by name (:func:`requirement_text`). Split out of :mod:`execbench.sources.repos`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

from execbench.sources.errors import SourceError


PYTEST = "pytest==9.0.3"


@dataclass(frozen=True)
class RepoConfig:
    """How one library is built into tasks. The default corpus pins these; for any other
    spec they are inferred from the source tree (:func:`infer_config`)."""

    name: str
    version: str
    test_deps: tuple[str, ...] = (PYTEST,)
    env: dict[str, str] = field(default_factory=dict)  # run-time environment (pure-Python switches)
    test_modules: tuple[str, ...] = ()  # default subset (relative paths); () = every test file
    exclude: tuple[str, ...] = ()  # regexes on relative test-file paths, never built
    note: str = ""
    license: str = ""  # SPDX id of the library's license (dataset cards)


# The paper's seven libraries (RepoReason table 5), pinned. Test dependencies are what the
# selected suites import; pytest-xdist/cov/codspeed are not needed (addopts are dropped).
DEFAULT_CORPUS: tuple[RepoConfig, ...] = (
    RepoConfig("toolz", "1.2.0", (PYTEST,), exclude=(r"test_curried_doctests", r"test_signatures"),
               note="pure Python", license="BSD-3-Clause"),
    RepoConfig("cachetools", "8.0.2", (PYTEST,), note="pure Python", license="MIT"),
    RepoConfig("yarl", "1.25.1", (PYTEST, "hypothesis==6.155.2"), env={"YARL_NO_EXTENSIONS": "1"},
               exclude=(r"benchmarks", r"test_pydantic", r"test_quoting_hypothesis"),
               note="YARL_NO_EXTENSIONS=1: quoting runs in yarl/_quoting_py.py, not the Cython module",
               license="Apache-2.0"),
    RepoConfig("networkx", "3.6.1", (PYTEST,),
               test_modules=(
                   "networkx/algorithms/tests/test_simple_paths.py",
                   "networkx/algorithms/tests/test_dag.py",
                   "networkx/algorithms/tests/test_cycles.py",
                   "networkx/algorithms/tests/test_cluster.py",
                   "networkx/algorithms/shortest_paths/tests/test_generic.py",
                   "networkx/algorithms/traversal/tests/test_dfs.py",
                   "networkx/algorithms/components/tests/test_connected.py",
                   "networkx/classes/tests/test_function.py",
               ),
               note="pure Python; numpy/scipy not installed (tests needing them are skipped)",
               license="BSD-3-Clause"),
    RepoConfig("jinja2", "3.1.6", (PYTEST,), exclude=(r"test_async",),
               note="pure Python (MarkupSafe's C speedups are a dependency, not traced)", license="BSD-3-Clause"),
    RepoConfig("attrs", "26.1.0", (PYTEST, "hypothesis==6.155.2", "pympler==1.1", "cloudpickle==3.1.3"),
               exclude=(r"test_mypy", r"test_pyright", r"test_3rd_party"), note="pure Python", license="MIT"),
    RepoConfig("sympy", "1.14.0", (PYTEST, "hypothesis==6.155.2"),
               test_modules=(
                   "sympy/sets/tests/test_sets.py",
                   "sympy/core/tests/test_expand.py",
                   "sympy/simplify/tests/test_radsimp.py",
                   "sympy/functions/combinatorial/tests/test_comb_numbers.py",
                   "sympy/polys/tests/test_partfrac.py",
                   "sympy/functions/elementary/tests/test_integers.py",
               ),
               note="pure Python (mpmath dependency, gmpy2 not installed)", license="BSD-3-Clause"),
)


DEFAULT_BY_NAME = {c.name.lower(): c for c in DEFAULT_CORPUS}


def config_for(name: str, version: str, root: Path, full: bool = False) -> RepoConfig:
    default = DEFAULT_BY_NAME.get(name.lower())
    if default is not None and default.version == version:
        if full:
            return RepoConfig(default.name, default.version, default.test_deps, default.env, (),
                              default.exclude, default.note)
        return default
    return infer_config(name, version, root)


def infer_config(name: str, version: str, root: Path) -> RepoConfig:
    """Test dependencies the tree declares (:mod:`execbench.sources.testdeps`: dependency
    groups, extras, requirement files, tox.ini; markers applied); pytest is the repository's
    own pin when the builder's default does not satisfy it."""
    from execbench.sources import testdeps

    declared = testdeps.declared(root, name)
    pytest, others = testdeps.pytest_requirement(declared.requirements, PYTEST)
    deps = [requirement_text(d, f"{name} test dependency") for d in [pytest, *others]]
    env = {"YARL_NO_EXTENSIONS": "1"} if name.lower() == "yarl" else {}
    return RepoConfig(name, version, tuple(deps), env)


def requirement_text(dep: str, what: str = "test dependency") -> str:
    """``dep`` as a normalised PEP 508 requirement by name (version specifiers, extras and
    markers allowed). Options (``--report``, ``-r``, ``--index-url``, ``--target``), direct
    URLs and paths are refused with SourceError: pip would act on them."""
    text = dep.strip()
    if not text or text.startswith("-") or len(text) > 500:
        raise SourceError(f"{what} {dep!r} refused: not a requirement (pip option or empty)")
    try:
        requirement = Requirement(text)
    except InvalidRequirement as exc:
        raise SourceError(f"{what} {dep!r} refused: not a PEP 508 requirement ({exc})") from None
    if requirement.url:
        raise SourceError(f"{what} {dep!r} refused: direct URL or path")
    return str(requirement)
