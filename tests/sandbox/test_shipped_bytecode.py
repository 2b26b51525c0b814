"""Issue 33, principle 1 (nothing a candidate wrote is used unverified), for bytecode: an sdist
can ship ``__pycache__`` entries whose headers match their sources' size and mtime (an archive
keeps both), so Python would run the shipped bytecode instead of the source a task shows, and a
lone ``mod.pyc`` imports as a module no text shows. A cached sdist tree loses every shipped
bytecode file before any run, and gets the library's own, compiled from its text (checked-hash:
valid only while the source keeps the hash it was compiled from)."""

from __future__ import annotations

import importlib.util
import os
import py_compile
import subprocess
import sys
from pathlib import Path

from execbench.sources import repo_trees


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "lib-1.0"
    pkg = root / "lib"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    core = pkg / "core.py"
    core.write_text("def answer():\n    return 42\n")
    return root, core


def _plant_forged_bytecode(core: Path) -> None:
    """A pyc of a different text, made to look like the shown source's (same size, same mtime)."""
    forged = core.with_name("forged_src.py")
    forged.write_text("def answer():\n    return 81\n")  # the same length as core.py's text
    assert forged.stat().st_size == core.stat().st_size
    os.utime(forged, (core.stat().st_atime, core.stat().st_mtime))
    py_compile.compile(str(forged), cfile=importlib.util.cache_from_source(str(core)), doraise=True)
    forged.unlink()
    (core.parent / "hidden.pyc").write_bytes(Path(importlib.util.cache_from_source(str(core))).read_bytes())


def _run(root: Path, code: str, *flags: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")} | {"PYTHONDONTWRITEBYTECODE": "1"}
    out = subprocess.run([sys.executable, *flags, "-c", code], cwd=root, env=env, capture_output=True, text=True,
                         timeout=60)
    return (out.stdout + out.stderr).strip()


def test_shipped_bytecode_runs_instead_of_the_source_until_it_is_removed(tmp_path):
    root, core = _tree(tmp_path)
    _plant_forged_bytecode(core)
    # the premise: as unpacked, the run executes the forged bytecode and imports the lone .pyc
    assert _run(root, "import lib.core; print(lib.core.answer())") == "81"
    assert _run(root, "import lib.hidden; print(lib.hidden.answer())") == "81"
    assert sorted(p.name for p in repo_trees.shipped_bytecode(root)) == ["__pycache__", "hidden.pyc"]

    assert repo_trees.remove_bytecode(root) == 2
    assert repo_trees.compile_library([root / "lib" / "__init__.py", core]) == 2
    assert repo_trees.shipped_bytecode(root) == [root / "lib" / "__pycache__"]  # only the library's own now
    assert _run(root, "import lib.core; print(lib.core.answer())") == "42"
    assert "No module named 'lib.hidden'" in _run(root, "import lib.hidden")


def test_the_librarys_own_bytecode_is_read_and_holds_only_for_the_text_it_was_made_from(tmp_path):
    root, core = _tree(tmp_path)
    repo_trees.compile_library([core])
    pyc = Path(importlib.util.cache_from_source(str(core)))
    flags = int.from_bytes(pyc.read_bytes()[4:8], "little")
    assert flags == 0b11  # hash-based, checked against the source at every import
    read = f"code object from '{pyc}'"  # what ``python -v`` says when it runs a .pyc
    loaded = _run(root, "import lib.core; print('answer', lib.core.answer())", "-v")
    assert read in loaded and "answer 42" in loaded
    core.write_text("def answer():\n    return 43\n")  # the hash no longer matches: the source is compiled
    loaded = _run(root, "import lib.core; print('answer', lib.core.answer())", "-v")
    assert "answer 43" in loaded and read not in loaded


def test_a_module_that_does_not_compile_is_left_to_python(tmp_path):
    root, core = _tree(tmp_path)
    bad = core.with_name("bad.py")
    bad.write_text("def broken(:\n")
    assert repo_trees.compile_library([core, bad]) == 1
    assert not Path(importlib.util.cache_from_source(str(bad))).exists()
    assert "SyntaxError" in _run(root, "import lib.bad")


def test_a_cached_sdist_tree_is_cleaned_once_and_compiled_once_per_interpreter(cache_dir, monkeypatch):
    """``repos.prepare`` calls this for every ``pypi:`` tree (the sdist as ``fetch_sdist`` unpacked it)."""
    from execbench.sources import repo_paths, repos

    base = repo_paths.within(repos.repos_dir(), "src", "lib-1.0")
    root, core = _tree(base / "unpacked")
    _plant_forged_bytecode(core)
    compiled: list[list[Path]] = []
    real = repo_trees.compile_library
    monkeypatch.setattr(repos, "compile_library", lambda files: compiled.append(files) or real(files))
    repos._library_bytecode("lib", "1.0", root, root, ("lib",))
    assert _run(root, "import lib.core; print(lib.core.answer())") == "42"
    assert not (root / "lib" / "hidden.pyc").exists()
    assert sorted(p.name for p in compiled[0]) == ["__init__.py", "core.py"]
    assert (base / ".bytecode-removed").is_file() and (base / f".bytecode-{repo_trees.bytecode_tag()}").is_file()
    repos._library_bytecode("lib", "1.0", root, root, ("lib",))  # done: neither step again
    assert len(compiled) == 1
