"""The repo family's analysis slices (difficulty, reasoning scope), as analysis reads them through the plug-in."""

from execbench.analysis.logs import row_from_records
from execbench import registry
from execbench.contract import Slices
from execbench.eval.logs import SAMPLE_RECORD_VERSION


def test_difficulty_and_scope_from_labels_metrics_and_slice_files():
    rules = registry.get("repo").capability(Slices)
    assert rules is not None
    sample_slices = rules.sample
    assert sample_slices({"difficulty": {"label": "Hard "}, "scope": "repository-wide"}, {}) == \
        {"difficulty": "hard", "scope": "repository-wide"}
    assert sample_slices({}, {"difficulty": 2, "slice_files": 1}) == {"difficulty": "medium", "scope": "intra-file"}
    assert sample_slices({}, {"difficulty": 3.0, "slice_files": 4}) == {"difficulty": "hard", "scope": "cross-file"}
    # out of range, non-integer, boolean and absent values give no label
    assert sample_slices({}, {"difficulty": 4, "slice_files": 0}) == {"difficulty": None, "scope": None}
    assert sample_slices({"difficulty": True}, {"difficulty": 1.5, "slice_files": True}) == \
        {"difficulty": None, "scope": None}
    # a recorded label wins over the metric
    assert sample_slices({"difficulty": "easy"}, {"difficulty": 3})["difficulty"] == "easy"


def test_a_log_row_gets_the_family_slices_and_no_other_family_does():
    def row(family, metrics):
        record = {"version": SAMPLE_RECORD_VERSION, "id": f"{family}/x/y#a",
                  "metadata": {"family": family, "metrics": metrics}}
        return row_from_records({}, record, "m", "log", "e")

    assert (row("repo", {"difficulty": 1, "slice_files": 2})["difficulty"],
            row("repo", {"difficulty": 1, "slice_files": 2})["scope"]) == ("easy", "cross-file")
    trace = row("trace", {"difficulty": 1, "slice_files": 2})
    assert (trace["difficulty"], trace["scope"]) == (None, None)
