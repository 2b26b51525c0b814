"""The shipped corpora's answer keys are pinned: building them gives the recorded content hash.

The hashes were recorded from builds made before the job runner (commit 0939e2f, one
sandbox per candidate and seed) and are what the batched builds must still give: a change
of speed or plumbing must not change a single task. When a deliberate change alters a
family's outcomes, bump the family's version, rebuild, and update the hash here with the
reason in the commit message. Trace answers come from the pinned CPython 3.11
(tracing/interpreter.py), so these hashes do not depend on the interpreter running the tests.
"""

from __future__ import annotations

import json

import pytest

from execbench import families
from execbench.families.build import build_dataset

PINNED = {
    # (family, source): content hash of tasks.jsonl
    ("trace", "humaneval"): "sha256:4c10133331db09adad77a41fe28046f20cd4900cd9c9fe25efd59d951014d5c5",
    ("trace", "advanced"): "sha256:bb7b541e8695e374a0a37ac3a97cbb4fcf91f2c3a466b2dd630063c765b392aa",
}


@pytest.mark.slow
@pytest.mark.parametrize(("family", "source"), sorted(PINNED))
def test_shipped_corpus_builds_to_its_pinned_hash(family, source, tmp_path, cache_dir):
    plugin = families.get(family)
    manifest = build_dataset(plugin, [source], tmp_path / "out", options=dict(plugin.default_options), jobs=2)
    assert manifest["content_hash"] == PINNED[family, source], (
        f"{family} {source}: {manifest['tasks']} tasks, rejected by stage "
        f"{json.dumps(manifest['rejected_by_stage'])}")
