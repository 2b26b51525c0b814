"""Issue 34, item 6: a dataset card's license of a library comes from the package's own
metadata when the family does not pin it, and is unknown only when none is declared."""

from __future__ import annotations

import importlib.metadata

from execbench import registry
from execbench.contract import source_license
from execbench.sources import repos

REPO = registry.get("repo")


def test_a_pinned_corpus_library_keeps_its_declared_license():
    assert source_license(REPO, "toolz-1.2.0") == "BSD-3-Clause (toolz 1.2.0)"


def test_another_release_reads_the_license_from_its_package_metadata(tmp_path, monkeypatch):
    monkeypatch.setattr(repos, "repos_dir", lambda: tmp_path)
    base = tmp_path / "src" / "tinylib-0.3"
    (base / "unpacked" / "tinylib-0.3").mkdir(parents=True)
    (base / "unpacked" / "tinylib-0.3" / "PKG-INFO").write_text(
        "Metadata-Version: 2.1\nName: tinylib\nVersion: 0.3\nLicense: UNKNOWN\n"
        "Classifier: License :: OSI Approved :: MIT License\n\nlong description\n")
    (base / "tree").write_text("unpacked/tinylib-0.3")
    (base / ".complete").write_text("ok\n")
    assert repos.declared_license("tinylib", "0.3") == "MIT License"
    assert source_license(REPO, "tinylib-0.3") == "MIT License (tinylib 0.3, from its package metadata)"


def test_an_installed_distribution_of_that_version_is_read_and_nothing_is_unknown(tmp_path, monkeypatch):
    monkeypatch.setattr(repos, "repos_dir", lambda: tmp_path)
    version = importlib.metadata.version("networkx")
    expected = importlib.metadata.metadata("networkx").get("License-Expression")
    assert expected  # networkx 3.6 declares BSD-3-Clause
    assert repos.declared_license("networkx", version) == expected
    assert repos.declared_license("networkx", "0.0.0-never") is None
    assert repos.declared_license("no-such-package-here", "1.0") is None
    assert source_license(REPO, "no-such-package-here-1.0") is None  # the card says "unknown"
