"""Fixtures shared by the family tests: builds of shipped corpora that several tests check."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def shipped_state_classic(tmp_path_factory):
    """(manifest, dataset dir) of the state family's classic corpus, built once per session
    with the default options: the pinned-hash test (test_shipped_corpora.py) and the
    independent C++ oracle (state/test_state_cpp_oracle.py) both check this one build."""
    from execbench.contract import families
    from execbench.families.build import build_dataset

    plugin = families.get("state")
    out = tmp_path_factory.mktemp("shipped-state-classic") / "ds"
    manifest = build_dataset(plugin, ["classic"], out, options=dict(plugin.default_options), jobs=2)
    return manifest, out
