"""Issue 22, items 11-14: the builder never follows, mounts or recurses into what a sandboxed
install wrote, and source text is escaped in the dataset card.

Each install test builds a local checkout whose setup.py (run by the sandboxed pip) attacks
the venv it is being installed into; the builder's reaction is checked on real outputs: a
file outside everything, what a later sandboxed run can read, a package's rejection."""

from __future__ import annotations

import html
import os
import re
import sys
import textwrap
from pathlib import Path

import pytest

from execbench import sandbox
from execbench.dataset import Task
from execbench.dataset.export import write_export
from execbench.dataset.store import read_inputs
from execbench.dataset.store import DatasetWriter
from execbench.sources import repo_paths, repo_trees, repos
from execbench.sources.errors import SourceError


def hostile_checkout(tmp_path: Path, name: str, payload: str) -> Path:
    """A local checkout whose setup.py runs ``payload`` (with VENV: the venv being installed
    into) every time pip runs it, in the sandbox."""
    root = tmp_path / name
    pkg = name.replace("-", "_")
    (root / pkg).mkdir(parents=True)
    (root / pkg / "__init__.py").write_text("def f():\n    return 1\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_f.py").write_text(f"from {pkg} import f\n\ndef test_f():\n    assert f() == 1\n")
    (root / "setup.py").write_text(
        "import os, sys, setuptools\n"
        "VENV = os.path.dirname(os.path.dirname(sys.executable))\n"
        + textwrap.dedent(payload)
        + f"\nsetuptools.setup(name={name!r}, version='0.1', packages=[{pkg!r}])\n")
    return root


@pytest.mark.slow
def test_11_a_planted_completion_marker_is_not_written_through(tmp_path, cache_dir):
    victim = tmp_path / "victim.txt"  # root's file, outside the venv, the cache and the sandbox
    victim.write_text("ORIGINAL\n")
    victim.chmod(0o600)
    root = hostile_checkout(tmp_path, "hostile-marker", f"""
        for marker in (os.path.join(VENV, ".complete"), VENV + ".complete"):
            try:
                if not os.path.lexists(marker):
                    os.symlink({str(victim)!r}, marker)
            except OSError:
                pass
    """)
    # issue 33: a link no distribution installed is a stray file in the venv: the package's rejection
    with pytest.raises(SourceError, match="not installed by any distribution: .complete"):
        repos.prepare(str(root))
    assert victim.read_text() == "ORIGINAL\n"
    assert oct(victim.stat().st_mode & 0o777) == oct(0o600)
    venvs = repo_paths.repos_dir() / "venv"
    assert not [p for p in venvs.iterdir()]  # the venv removed, no marker written through or beside it
    with pytest.raises(SourceError):
        repos.prepare(str(root))  # installed afresh, refused again, still not written through
    assert victim.read_text() == "ORIGINAL\n"


@pytest.mark.slow
def test_12_a_rewritten_pyvenv_cfg_mounts_nothing_more(tmp_path, cache_dir):
    builds = tmp_path / "builds"  # an earlier build in the cache, in a directory only root may enter
    earlier = builds / "earlier"
    (earlier / "bin").mkdir(parents=True)
    (earlier / "lib" / "python3.11").mkdir(parents=True)
    (earlier / "answers.jsonl").write_text("ANSWER-KEY-CANARY-1729\n")
    builds.chmod(0o700)
    root = hostile_checkout(tmp_path, "hostile-cfg", f"""
        cfg = os.path.join(VENV, "pyvenv.cfg")
        text = open(cfg).read()
        if {str(earlier)!r} not in text:
            open(cfg, "a").write("home = {earlier}/bin\\n")
    """)
    repo = repos.prepare(str(root))
    venv = Path(repo.python).parent.parent
    program = textwrap.dedent(f"""
        import hostile_cfg
        print("imported", hostile_cfg.f())
        try:
            print(open({str(earlier / 'answers.jsonl')!r}).read())
        except OSError as exc:
            print(type(exc).__name__)
    """)
    result = sandbox.run([str(repo.python), "-c", program], read_only_paths=[str(repo.import_root)])
    out = result.stdout.decode()
    assert result.ok and out.startswith("imported 1"), (result.reason(), out, result.stderr[-2000:])
    assert "CANARY" not in out
    assert str(earlier) not in (venv / "pyvenv.cfg").read_text()  # the builder's own file again


def test_12_a_venvs_mounts_come_from_a_first_line_allow_listed_home_only(tmp_path):
    """Even a pyvenv.cfg rewritten after the build picks no mount: only its first line
    counts, only an allow-listed home, never a symlink, and bin/python is not resolved."""
    from execbench.sandbox._run import _install_prefix

    earlier = tmp_path / "earlier"
    (earlier / "bin").mkdir(parents=True)
    (earlier / "lib" / "python3.11").mkdir(parents=True)
    os.symlink(sys.executable, earlier / "bin" / "python3")
    os.symlink(earlier / "bin", tmp_path / "link-to-bin")
    home = os.path.dirname(getattr(sys, "_base_executable", sys.executable))
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    for first, rest in [(f"home = {home}", f"home = {earlier}/bin"), (f"home = {earlier}/bin", ""),
                        (f"home = {tmp_path}/link-to-bin", ""), (f"home = {home}/../../{earlier}/bin", "")]:
        (venv / "pyvenv.cfg").write_text(f"{first}\n{rest}\n")
        for target in (earlier / "bin" / "python3", sys.executable):
            if os.path.lexists(venv / "bin" / "python"):
                os.unlink(venv / "bin" / "python")
            os.symlink(target, venv / "bin" / "python")
            mounts = _install_prefix(str(venv / "bin" / "python"))
            assert str(venv) in mounts
            assert not any(m.startswith((str(earlier), str(tmp_path / "link-to-bin"))) for m in mounts), (first, mounts)
    cfg = tmp_path / "elsewhere.cfg"
    cfg.write_text(f"home = {earlier}/bin\n")
    os.unlink(venv / "pyvenv.cfg")
    os.symlink(cfg, venv / "pyvenv.cfg")
    assert not any(m.startswith(str(earlier)) for m in _install_prefix(str(venv / "bin" / "python")))


def test_12_parents_of_mounts_show_only_what_is_mounted(tmp_path):
    """A 0700 parent of a mount is a directory of the new root: readable and searchable
    (pytest lists a checkout's ancestors), holding only the mount, never the host's other
    entries."""
    private = tmp_path / "private"
    (private / "shared").mkdir(parents=True)
    (private / "hidden-sibling").mkdir()
    (private / "shared" / "data.txt").write_text("shared\n")
    private.chmod(0o700)
    program = textwrap.dedent(f"""
        import os
        print(oct(os.stat({str(private)!r}).st_mode & 0o777))
        print(open({str(private / 'shared' / 'data.txt')!r}).read().strip())
        try:
            print(os.listdir({str(private)!r}))
        except OSError as exc:
            print(type(exc).__name__)
    """)
    result = sandbox.run([sys.executable, "-c", program], read_only_paths=[str(private / "shared")])
    assert result.ok, (result.reason(), result.stderr[-2000:])
    assert result.stdout.decode().split() == ["0o755", "shared", "['shared']"]


@pytest.mark.slow
def test_13_a_deep_tree_in_the_venv_is_the_packages_rejection(tmp_path, cache_dir):
    from execbench.families.repo.preparation import packages

    root = hostile_checkout(tmp_path, "hostile-deep", """
        deep = os.path.join(VENV, "deep")
        if not os.path.lexists(deep):
            here = os.getcwd()
            os.mkdir(deep)
            os.chdir(deep)
            for _ in range(1100):
                os.mkdir("d")
                os.chdir("d")
            os.chdir(here)
    """)

    def build_file(*args, **kwargs):
        raise AssertionError("no test module of a rejected package is built")

    outcome = packages.build_package(str(root), {}, build_file)  # what a list: build does per package
    assert outcome.tasks == []
    assert [(r["candidate"], r["stage"]) for r in outcome.rejected] == [(repos.spec_label(str(root)), "package")]
    assert not outcome.rejected[0]["candidate"].startswith("/")  # issue 33: no host path in a rejection
    assert "deeper than" in outcome.rejected[0]["reason"]
    venvs = repo_paths.repos_dir() / "venv"
    assert not any(venvs.iterdir())  # the venv is gone, not left half-owned by the sandbox's uid


HOSTILE_SOURCE = "x`<marquee>pwned</marquee>`|[click](javascript:alert(1))|`"


def test_14_source_text_is_escaped_in_the_dataset_card(tmp_path):
    markdown_it = pytest.importorskip("markdown_it")
    source = HOSTILE_SOURCE.replace("/", "")  # a task id's source has no '/' or white space
    folder = tmp_path / "ds`<b>bold<b>[x](javascript:alert(2))"
    with DatasetWriter(folder, settings={"source": "<script>alert(3)<script>"}) as writer:
        writer.add(Task(id=f"trace/{source}/p/0#trace", family="trace", arm="trace", source_id=f"{source}/p",
                        language="python", prompt_fields={"program": "x = 1\n", "call": "f()"}, answer=[1],
                        answer_kind="lines"))
        writer.close()
    write_export(read_inputs([folder]), tmp_path / "hf",
                 licenses={f"trace/{source}": "MIT <img src=x onerror=alert(4)> [y](javascript:alert(5))"})
    card = (tmp_path / "hf" / "README.md").read_text()
    md = markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table")
    md.validateLink = lambda url: True  # as permissive as any renderer: escaping must not rely on it
    page = md.render(card.split("---\n", 2)[2])
    for bad in ("<marquee", "<script", "<img", "<b>", 'href="javascript:'):
        assert bad not in page, (bad, page)
    table = page[page.index("Sources and licenses"):]
    table = table[:table.index("</table>")]
    rows = re.findall(r"<tr>(.*?)</tr>", table, re.S)
    assert len(rows) == 2 and all(len(re.findall(r"<t[hd]\b", row)) == 2 for row in rows), rows
    assert f"<code>{html.escape(f'trace/{source}', quote=False)}</code>" in rows[1]


def test_13_a_deep_sdist_from_the_sandbox_is_refused(tmp_path):
    """The sdist of a pypi: package comes back from the sandboxed pip download (its setup
    script may have replaced it): a 1,100-deep member is a SourceError, not a crash."""
    import io
    import tarfile

    from execbench.sources.errors import SourceError

    archive = tmp_path / "deep-0.1.tar.gz"
    with tarfile.open(archive, "w:gz", format=tarfile.PAX_FORMAT) as tf:
        info = tarfile.TarInfo("deep-0.1/" + "d/" * 1100 + "x.py")
        info.size = 2
        tf.addfile(info, io.BytesIO(b"1\n"))
    with pytest.raises(SourceError, match="deeper than"):
        repo_trees._safe_unpack(archive, tmp_path / "unpacked")
