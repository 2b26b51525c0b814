"""The state family's ``paired`` corpus: inputs and case files, and the cross-language check.

Every program of ``src/execbench/data/state/paired/<name>/`` exists twice, ``python/main.py``
and ``cpp/main.cpp``: the same algorithm, the same inputs, identical stdout. This script
writes each pair's ``short.txt``/``long.txt`` (seeded by the pair's name, so reruns give the
same bytes) and ``case.toml`` files (no ``[checkpoint]``: both languages choose
automatically), and checks that both languages print the same bytes on both inputs, running
everything in the sandbox (g++ as an exec job)::

    python benchmarks/state_paired.py write          # inputs + case.toml for every pair
    python benchmarks/state_paired.py check [NAME..]  # same stdout in both languages
"""

from __future__ import annotations

import random
import string
import sys
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1] / "src" / "execbench" / "data" / "state" / "paired"


def _ints(rng: random.Random, n: int, lo: int, hi: int) -> str:
    return " ".join(str(rng.randint(lo, hi)) for _ in range(n))


def n_then_ints(short: int, long: int, lo: int = 1, hi: int = 999) -> Callable[[random.Random, bool], str]:
    def make(rng: random.Random, is_long: bool) -> str:
        n = long if is_long else short
        return f"{n}\n{_ints(rng, n, lo, hi)}\n"
    return make


def two_words(short: int, long: int, alphabet: str = "abcd") -> Callable[[random.Random, bool], str]:
    def make(rng: random.Random, is_long: bool) -> str:
        n = long if is_long else short
        a = "".join(rng.choice(alphabet) for _ in range(n))
        b = "".join(rng.choice(alphabet) for _ in range(n + rng.randint(-2, 2)))
        return f"{a}\n{b}\n"
    return make


def one_word(short: int, long: int, alphabet: str = "ab") -> Callable[[random.Random, bool], str]:
    def make(rng: random.Random, is_long: bool) -> str:
        n = long if is_long else short
        return "".join(rng.choice(alphabet) for _ in range(n)) + "\n"
    return make


def number(short: int, long: int) -> Callable[[random.Random, bool], str]:
    return lambda rng, is_long: f"{long if is_long else short}\n"


def words(short: int, long: int, vocabulary: int = 12) -> Callable[[random.Random, bool], str]:
    pool = ["ant", "bee", "cat", "dog", "eel", "fox", "gnu", "hen", "ibis", "jay", "kiwi", "lark", "mole",
            "newt", "owl", "pig", "quail", "rat", "seal", "toad"][:vocabulary]

    def make(rng: random.Random, is_long: bool) -> str:
        n = long if is_long else short
        return f"{n}\n" + " ".join(rng.choice(pool) for _ in range(n)) + "\n"
    return make


def grid(short: int, long: int, wall: float = 0.25) -> Callable[[random.Random, bool], str]:
    def make(rng: random.Random, is_long: bool) -> str:
        n = long if is_long else short
        rows = ["".join("#" if rng.random() < wall else "." for _ in range(n)) for _ in range(n)]
        rows[0] = "." + rows[0][1:]
        rows[-1] = rows[-1][:-1] + "."
        return f"{n} {n}\n" + "\n".join(rows) + "\n"
    return make


def pairs(short: int, long: int, hi: int = 10_000) -> Callable[[random.Random, bool], str]:
    def make(rng: random.Random, is_long: bool) -> str:
        n = long if is_long else short
        return f"{n}\n" + "\n".join(f"{rng.randint(1, hi)} {rng.randint(1, hi)}" for _ in range(n)) + "\n"
    return make


def graph(short: int, long: int, degree: int = 3, weights: int = 20) -> Callable[[random.Random, bool], str]:
    def make(rng: random.Random, is_long: bool) -> str:
        n = long if is_long else short
        edges = set()
        for v in range(1, n):  # connected: a random tree plus extra edges
            edges.add((rng.randrange(v), v))
        while len(edges) < min(n * degree // 2, n * (n - 1) // 2):
            a, b = rng.randrange(n), rng.randrange(n)
            if a != b:
                edges.add((min(a, b), max(a, b)))
        lines = [f"{a} {b} {rng.randint(1, weights)}" for a, b in sorted(edges)]
        return f"{n} {len(lines)}\n" + "\n".join(lines) + "\n"
    return make


def commands(short: int, long: int, ops: str = "LRUD") -> Callable[[random.Random, bool], str]:
    def make(rng: random.Random, is_long: bool) -> str:
        n = long if is_long else short
        return f"{n}\n" + "".join(rng.choice(ops) for _ in range(n)) + "\n"
    return make


def transactions(short: int, long: int, accounts: int = 5) -> Callable[[random.Random, bool], str]:
    def make(rng: random.Random, is_long: bool) -> str:
        n = long if is_long else short
        lines = [f"{rng.randrange(accounts)} {rng.randrange(accounts)} {rng.randint(1, 50)}" for _ in range(n)]
        return f"{accounts} {n}\n" + "\n".join(lines) + "\n"
    return make


def letters_text(short: int, long: int) -> Callable[[random.Random, bool], str]:
    def make(rng: random.Random, is_long: bool) -> str:
        n = long if is_long else short
        return "".join(rng.choice(string.ascii_lowercase[:8] + "  ") for _ in range(n)).strip() + "\n"
    return make


def brackets(short: int, long: int) -> Callable[[random.Random, bool], str]:
    """Balanced-looking bracket strings whose first unmatched ")" (if any) comes late."""
    def make(rng: random.Random, is_long: bool) -> str:
        n = long if is_long else short
        out, depth = [], 0
        for _ in range(n):
            if depth == 0 or rng.random() < 0.55:
                out.append("(")
                depth += 1
            else:
                out.append(")")
                depth -= 1
        return "".join(out) + ")" * (depth + 1) + "\n"
    return make


def triangle(short: int, long: int) -> Callable[[random.Random, bool], str]:
    def make(rng: random.Random, is_long: bool) -> str:
        n = long if is_long else short
        return f"{n}\n" + "\n".join(_ints(rng, r + 1, 0, 999) for r in range(n)) + "\n"
    return make


# name: (topic, input generator)
PAIRS: dict[str, tuple[str, Callable[[random.Random, bool], str]]] = {
    "bubble_early_exit": ("sorting", n_then_ints(5, 70)),
    "selection_sort": ("sorting", n_then_ints(5, 60)),
    "gcd_steps": ("numerical", pairs(3, 120)),
    "prime_factors": ("numerical", n_then_ints(3, 60, 2, 100_000)),
    "lcs_table": ("dynamic-programming", two_words(4, 40)),
    "edit_distance": ("dynamic-programming", two_words(4, 36, "abc")),
    "coin_min": ("dynamic-programming", number(7, 600)),
    "lis_quadratic": ("dynamic-programming", n_then_ints(5, 70)),
    "grid_paths": ("dynamic-programming", grid(4, 30, 0.15)),
    "knapsack_01": ("dynamic-programming", pairs(3, 30, 40)),
    "word_count": ("maps", words(6, 600)),
    "anagram_groups": ("maps", words(5, 300, 20)),
    "two_sum_pairs": ("maps", n_then_ints(6, 800, 1, 200)),
    "bank_accounts": ("simulation", transactions(4, 500)),
    "particles_1d": ("simulation", number(3, 160)),
    "matrix_power_mod": ("nested-loops", number(2, 40)),
    "pascal_rows": ("nested-loops", number(4, 70)),
    "spiral_walk": ("nested-loops", number(3, 30)),
    "binary_search_hits": ("while-early-exit", n_then_ints(4, 300, 1, 2000)),
    "bfs_maze": ("graphs", grid(4, 28, 0.2)),
    "islands_stack": ("graphs", grid(5, 30, 0.45)),
    "union_find": ("graphs", graph(5, 300)),
    "sliding_max": ("nested-loops", n_then_ints(7, 700)),
    "run_length": ("strings", one_word(6, 900, "aab")),
    "palindrome_centers": ("while-early-exit", one_word(4, 120, "ab")),
    "collatz_longest": ("while-early-exit", number(3, 220)),
    "rule110": ("simulation", number(2, 50)),
    "bracket_depth": ("while-early-exit", brackets(8, 1500)),
    "robot_walls": ("simulation", commands(5, 900)),
    "inventory_ops": ("maps", pairs(4, 600, 1000)),
    "dijkstra_dense": ("graphs", graph(4, 40)),
    "floyd_small": ("nested-loops", graph(4, 22)),
    "topo_kahn": ("graphs", graph(5, 250)),
    "counting_sort": ("sorting", n_then_ints(6, 700)),
    "stock_profit": ("dynamic-programming", n_then_ints(6, 900)),
    "trap_water": ("while-early-exit", n_then_ints(6, 900)),
    "josephus_list": ("simulation", number(5, 700)),
    "letter_frequency": ("maps", letters_text(12, 1200)),
    "digit_root_steps": ("while-early-exit", n_then_ints(3, 250, 1, 10**9)),
    "pisano_periods": ("while-early-exit", number(5, 45)),
    "service_queue": ("simulation", pairs(4, 600, 100)),
    "elevator": ("simulation", n_then_ints(4, 150)),
    "prefix_queries": ("nested-loops", pairs(5, 700, 100_000)),
    "insertion_shifts": ("sorting", n_then_ints(5, 90)),
    "lz78_phrases": ("maps", one_word(8, 1000, "abc")),
    "hanoi_iterative": ("simulation", number(3, 10)),
    "min_rotation": ("while-early-exit", one_word(6, 150, "ab")),
    "merge_intervals": ("sorting", pairs(5, 600, 5000)),
    "majority_vote": ("nested-loops", n_then_ints(7, 1000)),
    "running_median": ("simulation", n_then_ints(6, 600)),
    "triangle_path": ("dynamic-programming", triangle(4, 40)),
    "matrix_rotate": ("nested-loops", number(2, 60)),
    "naive_search": ("while-early-exit", one_word(10, 900, "ab")),
    "base_seven_digits": ("maps", n_then_ints(4, 250, 1, 10**9)),
    "look_and_say": ("while-early-exit", number(4, 22)),
    "happy_numbers": ("while-early-exit", number(6, 200)),
    "bit_counts": ("while-early-exit", n_then_ints(4, 300, 1, 10**9)),
    "change_ways": ("dynamic-programming", number(12, 500)),
    "stack_machine": ("simulation", pairs(5, 700, 1000)),
    "gas_station": ("nested-loops", pairs(6, 900, 1000)),
}


def write() -> None:
    for name, (topic, make) in PAIRS.items():
        for language, source in (("python", "main.py"), ("cpp", "main.cpp")):
            case = ROOT / name / language
            if not (case / source).is_file():
                raise SystemExit(f"missing {case / source}")
            rng = random.Random(f"paired/{name}")
            short, long = make(rng, False), make(rng, True)
            (case / "short.txt").write_text(short)
            (case / "long.txt").write_text(long)
            suffix = "py" if language == "python" else "cpp"
            (case / "case.toml").write_text(
                f'id = "{name}-{suffix}"\nlanguage = "{language}"\nsource = "{source}"\n'
                f'short_input = "short.txt"\nlong_input = "long.txt"\ntopic = "{topic}"\npair = "{name}"\n')


def check(names: list[str]) -> int:
    from execbench import sandbox

    limits = sandbox.Limits(cpu_seconds=60, wall_seconds=120)
    bad = 0
    for name in names or list(PAIRS):
        py, cpp = ROOT / name / "python", ROOT / name / "cpp"
        files = {"main.cpp": (cpp / "main.cpp").read_text(), "main.py": (py / "main.py").read_text(),
                 "short.txt": (py / "short.txt").read_text(), "long.txt": (py / "long.txt").read_text()}
        script = ("g++ -std=c++17 -O0 -o prog main.cpp || exit 9; for f in short long; do "
                  "./prog < $f.txt > $f.cpp.out || exit 7; python3 main.py < $f.txt > $f.py.out || exit 8; done")
        outs = ["short.cpp.out", "short.py.out", "long.cpp.out", "long.py.out"]
        result = sandbox.run(["sh", "-c", script], files=files, limits=limits, collect=outs)
        if result.exit_code != 0:
            print(f"{name}: failed ({result.exit_code}): {result.stderr.decode(errors='replace')[-500:]}")
            bad += 1
            continue
        same = [result.files[f"{k}.cpp.out"] == result.files[f"{k}.py.out"] for k in ("short", "long")]
        print(f"{name}: {'same' if all(same) else 'DIFFERENT'} "
              f"(short {len(result.files['short.py.out'])} B, long {len(result.files['long.py.out'])} B)")
        bad += not all(same)
    return bad


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else "check"
    if command == "write":
        write()
    else:
        raise SystemExit(1 if check(sys.argv[2:]) else 0)
