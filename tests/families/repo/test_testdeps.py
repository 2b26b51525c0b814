"""The repository's own test-dependency declarations (sources/testdeps.py), read as text."""

from __future__ import annotations

from pathlib import Path

from execbench.sources import repo_configs, testdeps


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_boltons_style_pin_of_pytest_is_honoured(tmp_path):
    root = _tree(tmp_path, {"requirements-test.txt": 'coverage==7.2.7\npytest==7.4.4; python_version < "3.8"\n'
                                                      'pytest==8.3.4; python_version >= "3.8"\npytest-cov==4.1.0\n'
                                                      'tox==4.8.0\n'})
    found = testdeps.declared(root, "boltons")
    assert found.requirements == ["pytest==8.3.4"]  # marker applied, tools dropped
    assert found.sources == ["requirements-test.txt"]
    config = repo_configs.infer_config("boltons", "25.0.0", root)
    assert config.test_deps == ("pytest==8.3.4",)


def test_pytest_range_the_default_satisfies_keeps_the_default(tmp_path):
    root = _tree(tmp_path, {"pyproject.toml": '[project.optional-dependencies]\ntest = ["pytest>=7", "hypothesis"]\n'})
    config = repo_configs.infer_config("pkg", "1.0", root)
    assert config.test_deps == (repo_configs.PYTEST, "hypothesis")


def test_groups_extras_requirement_files_and_tox(tmp_path):
    root = _tree(tmp_path, {
        "pyproject.toml": ('[dependency-groups]\nbase = ["attrs==25.1.0"]\n'
                           'tests = [{include-group = "base"}, "pkg", "freezegun>=1"]\n'
                           '[project.optional-dependencies]\ndev = ["pytest<8", "mypy"]\n'),
        "requirements/test-extra.txt": "-r ../requirements/common.txt\nsortedcontainers==2.4.0  # why\n",
        "requirements/common.txt": "six==1.17.0\n--index-url https://example.invalid\n",
        "tox.ini": "[tox]\nenvlist=py311\n[testenv]\ndeps =\n    pretend\n    py311: onlythere\n    -r{toxinidir}/requirements/common.txt\n",
    })
    found = testdeps.declared(root, "pkg")
    assert found.requirements == ["attrs==25.1.0", "freezegun>=1", "pytest<8", "six==1.17.0",
                                  "sortedcontainers==2.4.0", "pretend"]
    pytest, others = testdeps.pytest_requirement(found.requirements, "pytest==9.0.3")
    assert pytest == "pytest<8" and "pytest<8" not in others


def test_declarations_outside_the_tree_are_not_followed(tmp_path):
    (tmp_path / "outside.txt").write_text("evil==1.0\n")
    root = _tree(tmp_path / "repo", {"requirements-test.txt": "-r ../outside.txt\nok==1\n"})
    assert testdeps.declared(root).requirements == ["ok==1"]


def test_resolved_versions_come_from_dist_info_names(tmp_path):
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    (site / "pytest-8.3.4.dist-info").mkdir(parents=True)
    (site / "Typing_Extensions-4.1.0.dist-info").mkdir()
    assert testdeps.resolved(tmp_path / "venv" / "bin" / "python") == {"pytest": "8.3.4",
                                                                       "typing-extensions": "4.1.0"}


def test_manifest_records_the_test_environment(tmp_path):
    from types import SimpleNamespace

    from execbench.families.repo import build

    root = _tree(tmp_path / "src", {"requirements-test.txt": "pytest==8.3.4\nfreezegun==1.5.1\n"})
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    for dist in ("pytest-8.3.4", "freezegun-1.5.1"):
        (site / f"{dist}.dist-info").mkdir(parents=True)
    repo = SimpleNamespace(name="pkg", root=root, python=tmp_path / "venv" / "bin" / "python",
                           config=repo_configs.infer_config("pkg", "1.0", root))
    env = build.test_environment(repo)  # type: ignore[arg-type] - a stand-in with the fields it reads
    assert env == {"test_dependencies": ["pytest==8.3.4", "freezegun==1.5.1"],
                   "declared_in": ["requirements-test.txt"], "resolved": {"pytest": "8.3.4", "freezegun": "1.5.1"}}
