"""The determinism check's power (issue 33, principle 6): a program whose answer is a coin flip
of hash order is admitted at most 1 time in 20. Hash-order suspects (contract/hashorder.py)
get MIN_CHECKS = 5 check runs (1 in 32); two check runs admitted it 1 time in 4."""

from __future__ import annotations

import json
import random
import sys

import pytest

from execbench import registry, sandbox
from execbench.contract import hashorder, hashseeds
from execbench.dataset import read_rejected, read_tasks
from execbench.families.build import build_dataset

TRACE = registry.get("trace")

# The coin: the parity of which element comes first in three sets of two strings (one set's
# order is a slightly biased coin, since two hashes can share a slot; the parity of three is fair).
_COINS = """\
import json, sys
for sets in json.load(sys.stdin):
    parity = 0
    for pair in sets:
        for first in set(pair):
            break
        parity ^= first == pair[0]
    print(int(parity))
"""


def coins(programs: list[list[list[str]]], seed: int) -> list[int]:
    result = sandbox.run_python(["-c", _COINS], stdin=json.dumps(programs), env={"PYTHONHASHSEED": str(seed)})
    assert result.ok, result.reason()
    return [int(line) for line in result.stdout.split()]


def _programs(n: int, rng: random.Random) -> list[list[list[str]]]:
    word = lambda: "".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=6))  # noqa: E731 - a one-line helper
    return [[[word(), word()] for _ in range(3)] for _ in range(n)]


def test_suspects_are_the_programs_that_can_reach_hash_order():
    assert hashorder.may_see_hash_order("def f(x):\n    return {x, 'a'}\n")
    assert hashorder.may_see_hash_order("def f(xs):\n    return list(set(xs))\n")
    assert hashorder.may_see_hash_order("def f(d, e):\n    return d.keys() - e\n")
    assert hashorder.may_see_hash_order("def f(x):\n    return hash(x) % 3\n")
    assert hashorder.may_see_hash_order("def f(x):\n    return getattr(__builtins__, 's' + 'et')(x)\n")
    assert hashorder.may_see_hash_order("import os\ndef f(x):\n    return os.listdir(x)\n")
    assert hashorder.may_see_hash_order("def f(:\n")   # does not parse: a suspect
    assert not hashorder.may_see_hash_order("import math\ndef f(x):\n    return [math.sqrt(v) for v in x]\n")
    assert not hashorder.may_see_hash_order("def f(d):\n    return sorted(d, key=len)\n")


def test_suspects_get_five_check_seeds_in_every_build(monkeypatch):
    monkeypatch.delenv(hashseeds.ENV, raising=False)
    resolved, record = hashseeds.resolve({"repeats": 3, "check_seeds": ""})
    checks, extras = resolved["hash_seeds"][1:], hashseeds.extra(resolved)
    assert len(checks) == 2 and len(extras) == 3 == hashseeds.MIN_CHECKS - 2
    assert len(set(checks + extras)) == 5 and record["extra"] == extras
    assert hashseeds.extra({**resolved, "repeats": 6}) == []   # six repeats need none
    # pinned: the seeds after the first repeats-1 are the extra ones
    assert hashseeds.extra({"repeats": 3, "check_seeds": "4,5,6,7,8"}) == [6, 7, 8]
    assert hashseeds.extra({"repeats": 3, "check_seeds": "4,5"}) == []


def test_a_coin_flip_of_hash_order_passes_at_most_one_time_in_twenty():
    """Measured: 1,000 coin-flip programs, each run under the key seed and five random check
    seeds; the share whose answer agrees under all five (admitted) and under the first two
    (admitted before issue 33)."""
    rng = random.Random(33)
    programs = _programs(1000, rng)
    key = coins(programs, hashseeds.KEY_SEED)
    checks = [coins(programs, seed) for seed in hashseeds.draw(hashseeds.MIN_CHECKS)]
    agree = [[run[i] == key[i] for run in checks] for i in range(len(programs))]
    two = sum(all(a[:2]) for a in agree) / len(programs)
    five = sum(all(a) for a in agree) / len(programs)
    print(f"admitted: {two:.3f} with 2 check runs, {five:.3f} with 5", file=sys.stderr)
    assert 0.15 < two < 0.35          # 1 in 4 (sd 0.014)
    assert five <= 1 / 20             # 1 in 32 expected (sd 0.006)


def _case(root, program):
    case = root / "coin"
    case.mkdir(parents=True)
    (case / "program.py").write_text(program)
    (case / "case.toml").write_text('id = "coin"\nlanguage = "python"\nsource = "program.py"\ncalls = ["f(1)"]\n')
    return str(root)


@pytest.mark.slow
def test_the_trace_family_checks_a_suspect_under_five_seeds(tmp_path):
    """Seeds pinned so that the first two check seeds agree with the key run and a later one
    does not: two check runs admit the coin flip, five reject it."""
    rng = random.Random(7)
    programs = _programs(200, rng)
    key = coins(programs, 0)
    by_seed = {seed: coins(programs, seed) for seed in range(1, 16)}
    index = next(i for i in range(len(programs)) if sum(run[i] == key[i] for run in by_seed.values()) in range(5, 11))
    agreeing = [s for s, run in by_seed.items() if run[index] == key[index]]
    differing = [s for s, run in by_seed.items() if run[index] != key[index]]
    pinned = agreeing[:4] + differing[:1]
    lines = [f"for first in set({pair!r}):\n        break\n    parity ^= first == {pair[0]!r}" for pair in programs[index]]
    program = "def f(x):\n    parity = 0\n" + "".join(f"    {line}\n" for line in lines) + \
        "    for _ in range(3 + parity):\n        x += 1\n    return x\n"
    src = _case(tmp_path / "src", program)
    old = tmp_path / "old"
    build_dataset(TRACE, [src], old, options={**TRACE.default_options, "check_seeds": ",".join(map(str, pinned[:2]))})
    assert [t.id for t in read_tasks(old)] == ["trace/src/coin/0#trace"]
    new = tmp_path / "new"
    build_dataset(TRACE, [src], new, options={**TRACE.default_options, "check_seeds": ",".join(map(str, pinned))})
    assert list(read_tasks(new)) == []
    rejected = list(read_rejected(new))
    assert [r["stage"] for r in rejected] == ["determinism"]
    assert rejected[0]["hash_seeds"] == [0, *pinned] and "across 6 hash seeds" in rejected[0]["reason"]
