"""Shared report fixtures: fast statistics options, and two reports built once per session
(synthetic data of every family with known effects; real Inspect logs of a scripted model)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.inspect_fixture import shared_logs
from analysis.synthetic import mutation_rows, synthetic_frame
from execbench.analysis.logs import read_logs
from execbench.analysis.schema import normalize
from execbench.report import write_report
from execbench.report.sections import Options

FAST = Options(replicates=400, permutations=400, descriptive_replicates=200)


@pytest.fixture
def fast():
    """Fewer bootstrap replicates / permutations: the numbers are tested in tests/analysis."""
    return FAST


@pytest.fixture(scope="session")
def synthetic_report(tmp_path_factory):
    df = pd.concat([synthetic_frame(), normalize(pd.DataFrame(mutation_rows(np.random.default_rng(2))))],
                   ignore_index=True)
    return df, write_report(df, tmp_path_factory.mktemp("synthetic") / "synthetic.html", options=FAST)


@pytest.fixture(scope="session")
def real_report(tmp_path_factory):
    logs, _ = shared_logs()
    return write_report(read_logs([logs]), tmp_path_factory.mktemp("real") / "real.html", options=FAST)
