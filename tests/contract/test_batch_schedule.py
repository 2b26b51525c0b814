"""The build engine's batches (families/build.py ``_batches``): every miss in exactly one
batch, each batch in candidate order, equal costs dealt out in turn as before, unequal
costs balanced (the state family's C++ and Python cases alternate in its sources)."""

from __future__ import annotations

from execbench import registry
from execbench.contract import Candidate
from execbench.families.build import _batches, _cost


def misses(languages: str) -> list[tuple[int, Candidate]]:
    return [(i, Candidate(f"c{i}", {"language": "cpp" if kind == "c" else "python"}))
            for i, kind in enumerate(languages)]


def test_equal_costs_are_dealt_out_in_turn_as_before():
    items = misses("p" * 20)
    batches = _batches(items, 16, 2)
    assert [[i for i, _ in batch] for batch in batches] == [[0, 4, 8, 12, 16], [1, 5, 9, 13, 17],
                                                             [2, 6, 10, 14, 18], [3, 7, 11, 15, 19]]
    uneven = misses("p" * 37)
    assert [[i for i, _ in batch] for batch in _batches(uneven, 16, 2)] == [list(range(b, 37, 4)) for b in range(4)]


def test_alternating_dear_and_cheap_candidates_are_balanced_and_dearest_first():
    state = _cost(registry.get("state"))
    items = misses("cp" * 60)                      # paired: a C++ case, its Python twin, ...
    batches = _batches(items, 16, 2, state)
    assert sorted(i for batch in batches for i, _ in batch) == list(range(120))
    assert all([i for i, _ in batch] == sorted(i for i, _ in batch) for batch in batches)
    assert all(len(batch) <= 16 for batch in batches) and len(batches) == 8
    totals = [sum(state(c) for _, c in batch) for batch in batches]
    assert totals == sorted(totals, reverse=True)
    assert max(totals) - min(totals) <= max(state(c) for _, c in items)
    # dealt out in turn instead, every batch would have been one language: 75 against 15
    assert max(totals) < 2 * min(totals)
    assert all({c.payload["language"] for _, c in batch} == {"cpp", "python"} for batch in batches)


def test_a_family_without_a_cost_counts_every_candidate_alike():
    assert _cost(registry.get("trace"))(Candidate("x", {"language": "cpp"})) == 1.0
    assert _cost(registry.get("state"))(Candidate("x", {"language": "cpp"})) > 1.0
