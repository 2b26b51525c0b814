"""The ``networkx-simplex`` source: networkx's ``network_simplex`` held fixed, 30 graph inputs.

Program shown to the model (the same clean source for all 30 cases, one source cluster):
the text of ``networkx/algorithms/flow/networksimplex.py`` of networkx 3.6.1, read from the
installed distribution (never imported by the builder), with the two decorator lines of
``network_simplex`` removed (``@not_implemented_for("undirected")`` and
``@nx._dispatchable(...)``: backend-dispatch machinery; the function left is the one
``inspect.unwrap(nx.network_simplex)`` returns), followed by a small driver that reads a
directed graph from stdin, calls ``network_simplex(G)`` and prints the flow cost, then one
line ``u v flow`` per edge with non-zero flow, in input order. The program still imports
networkx for ``nx.NetworkXError``, ``nx.selfloop_edges`` and ``nx.DiGraph``.

Input format::

    n m
    d_0 d_1 ... d_{n-1}        node demands (networkx: demand = inflow - outflow)
    u v capacity weight        m lines, 0 <= u, v < n, u != v

Generated candidates (:func:`generate`, seeded, pure Python): the long input has n in
[20, 60] nodes and m = n * [3, 5] distinct directed edges with capacities 1..20 and weights
1..30; demands come from a random feasible flow (each edge carries 0, or with probability
0.35 a random amount up to its capacity), so every instance is feasible. The short input is
a 4-node, 5-edge instance from the same seed, with at least one unit of flow (generator 2;
generator 1's 5-node, 8-edge short inputs left two low-band cases under the 10x trace
ratio, its long inputs are unchanged).

Selection (:func:`select`, run once; the result ships as ``selection.json``): candidates
are examined in seed order; each long input's pivot-loop iterations (the "runtime" of the
simplex, deterministic where wall time is not) are counted in the sandbox; a candidate goes
to the first pre-declared band that holds its count and is taken while that band has fewer
than 10; examination stops when the three bands are full. The build re-counts every
selected case and rejects it (stage ``selection``) if it left its band.

Checkpoint: the pivot loop ``for i, p, q in DEAF.find_entering_edges():``, fields
``i, p, q`` (the entering edge of the iteration) and ``j, s, t`` (the leaving edge of the
previous iteration), inside iteration = the middle. Final arms compare bytes (the paper's
rule for this study) unless ``final_compare`` says otherwise.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.metadata
import json
import random
from functools import lru_cache
from pathlib import Path
from typing import Iterator, TypedDict

from execbench.contract import Candidate, SourceError
from execbench.families.state.records import StatePayload

NETWORKX_VERSION = "3.6.1"
GENERATOR_VERSION = "2"  # 2: short instance 4 nodes / 5 edges, never flow-free
SOURCE = "networkx-simplex"
SELECTION = Path(__file__).resolve().parents[2] / "data" / "state" / "networkx-simplex" / "selection.json"
BANDS = (("low", 30, 45), ("mid", 80, 100), ("high", 150, 180))  # pivot iterations, [lo, hi)
PER_BAND = 10
FIELDS = ["i", "p", "q", "j", "s", "t"]

DRIVER = '''

def main():
    import sys

    data = sys.stdin.read().split()
    n, m = int(data[0]), int(data[1])
    G = nx.DiGraph()
    for v in range(n):
        G.add_node(v, demand=int(data[2 + v]))
    edges = []
    pos = 2 + n
    for _ in range(m):
        u, v, c, w = (int(x) for x in data[pos : pos + 4])
        pos += 4
        G.add_edge(u, v, capacity=c, weight=w)
        edges.append((u, v))
    cost, flow = network_simplex(G)
    print(cost)
    for u, v in edges:
        if flow[u][v]:
            print(u, v, flow[u][v])


if __name__ == "__main__":
    main()
'''


@lru_cache(maxsize=1)
def program() -> str:
    """The program shown to the model (see the module docstring)."""
    try:
        version = importlib.metadata.version("networkx")
    except importlib.metadata.PackageNotFoundError:
        raise SourceError("networkx-simplex needs networkx installed") from None
    if version != NETWORKX_VERSION:
        raise SourceError(f"networkx-simplex is defined on networkx {NETWORKX_VERSION}, found {version}")
    paths = [f for f in importlib.metadata.files("networkx") or []
             if str(f).replace("\\", "/").endswith("algorithms/flow/networksimplex.py")]
    if not paths:
        raise SourceError("networkx's networksimplex.py was not found")
    source = Path(str(paths[0].locate())).read_text(encoding="utf-8")
    tree = ast.parse(source)
    function = next(node for node in tree.body
                    if isinstance(node, ast.FunctionDef) and node.name == "network_simplex")
    first = min(d.lineno for d in function.decorator_list)
    lines = source.splitlines(keepends=True)
    kept = lines[: first - 1] + lines[function.lineno - 1:]
    return "".join(kept).rstrip("\n") + "\n" + DRIVER


def pivot_loop_line(text: str) -> int:
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.For) and isinstance(node.iter, ast.Call) and \
                isinstance(node.iter.func, ast.Attribute) and node.iter.func.attr == "find_entering_edges":
            return node.lineno
    raise SourceError("the pivot loop of network_simplex was not found")


def _instance(rng: random.Random, n: int, m: int, force_flow: bool = False) -> str:
    edges: list[tuple[int, int]] = []
    seen: set[tuple[int, int]] = set()
    while len(edges) < m:
        u, v = rng.randrange(n), rng.randrange(n)
        if u != v and (u, v) not in seen:
            seen.add((u, v))
            edges.append((u, v))
    demand = [0] * n
    lines: list[str] = []
    for u, v in edges:
        capacity, weight = rng.randint(1, 20), rng.randint(1, 30)
        flow = rng.randint(1, capacity) if rng.random() < 0.35 else 0
        if force_flow and not flow and len(lines) == m - 1 and not any(demand):
            flow = 1  # a short instance with no flow at all would be trivial
        demand[v] += flow
        demand[u] -= flow
        lines.append(f"{u} {v} {capacity} {weight}")
    return f"{n} {m}\n{' '.join(map(str, demand))}\n" + "\n".join(lines) + "\n"


def generate(index: int) -> tuple[str, str]:
    """(short input, long input) of candidate ``index`` (deterministic)."""
    rng = random.Random(f"execbench-networkx-simplex-1-{index}")  # seed text fixed since generator 1
    n = rng.randint(20, 60)
    m = n * rng.randint(3, 5)
    long = _instance(rng, n, m)
    short = _instance(rng, 4, 5, force_flow=True)
    return short, long


def band_of(pivots: int) -> str | None:
    for name, lo, hi in BANDS:
        if lo <= pivots < hi:
            return name
    return None


class SelectedCase(TypedDict):
    index: int  # the generator's candidate index
    band: str
    pivots: int  # pivot-loop iterations of its long input at selection


class BandBounds(TypedDict):
    name: str
    min_pivots: int
    max_pivots_exclusive: int


class Selection(TypedDict):
    """``selection.json``: what :func:`select` examined and chose."""

    networkx: str
    generator: str
    program_sha256: str
    bands: list[BandBounds]
    per_band: int
    examined: int
    outside_bands: int
    failed: int
    first_index: int
    selected: list[SelectedCase]


def load_selection(path: Path = SELECTION) -> Selection:
    if not path.is_file():
        raise SourceError(f"{path} is missing: run `python -m execbench.families.state.netsimplex select`")
    return json.loads(path.read_text(encoding="utf-8"))


def candidates(path: Path = SELECTION) -> Iterator[Candidate]:
    selection = load_selection(path)
    text = program()
    line = pivot_loop_line(text)
    digest = hashlib.sha256(text.encode()).hexdigest()
    if selection.get("program_sha256") != digest or selection.get("generator") != GENERATOR_VERSION:
        raise SourceError("selection.json was made for another program or generator version: re-run the selection")
    for item in selection["selected"]:
        short, long = generate(item["index"])
        case = f"g{item['index']:05d}"
        payload: StatePayload = {
            "source": SOURCE,
            "case": case,
            "language": "python",
            "program": text,
            "short": short,
            "long": long,
            "checkpoint": {"loop_line": line, "fields": FIELDS, "inside_iteration": None, "core": FIELDS},
            "topic": "library",
            "compare": "bytes",
            "source_id": f"{SOURCE}/network_simplex",
            "preload": ["networkx"],
            "networkx": NETWORKX_VERSION,
            "band": {"name": item["band"], "pivots": item["pivots"],
                     "range": next([lo, hi] for name, lo, hi in BANDS if name == item["band"])},
            "provenance": {"networkx": NETWORKX_VERSION, "generator": GENERATOR_VERSION,
                           "candidate_index": item["index"], "band": item["band"],
                           "selection_pivots": item["pivots"]},
        }
        yield Candidate(key=f"{SOURCE}/{case}", payload=dict(payload))


def count_pivots(indices: list[int], *, time_limit: float = 20.0) -> dict[int, int | None]:
    """Pivot-loop iterations of the long inputs of ``indices``, counted in the sandbox."""
    from execbench.families.state import instrument_py, jobs

    text = program()
    loop = [lp for lp in instrument_py.loops(text) if lp.line == pivot_loop_line(text)]
    profile = instrument_py.profile_program(text, loop)
    runs = [jobs.python_job(str(index), "profile.py", profile, generate(index)[1], cpu=time_limit,
                            wall=2 * time_limit, memory_mb=1024, dump_global=instrument_py.PROFILE)
            for index in indices]
    out: dict[int, int | None] = {}
    for index, result in zip(indices, jobs.run(runs, preload=["networkx"])):
        value, _ = jobs.dump(result)
        counts = value.get("counts") if isinstance(value, dict) else None
        out[index] = int(counts[0]) if result.ok and isinstance(counts, list) and counts \
            and isinstance(counts[0], (int, float, str)) else None
    return out


def select(max_candidates: int = 2000, batch_size: int = 50, start: int = 0) -> Selection:
    """Examine candidates in index order until every band holds PER_BAND (see module docs)."""
    chosen: dict[str, list[SelectedCase]] = {name: [] for name, _, _ in BANDS}
    outside = failed = examined = 0
    index = start
    while index < start + max_candidates and any(len(v) < PER_BAND for v in chosen.values()):
        indices = list(range(index, min(index + batch_size, start + max_candidates)))
        index = indices[-1] + 1
        for i, pivots in count_pivots(indices).items():
            examined += 1
            if pivots is None:
                failed += 1
                continue
            band = band_of(pivots)
            if band is None:
                outside += 1
            elif len(chosen[band]) < PER_BAND:
                chosen[band].append({"index": i, "band": band, "pivots": pivots})
    selected = sorted((item for items in chosen.values() for item in items), key=lambda item: item["index"])
    return {
        "networkx": NETWORKX_VERSION,
        "generator": GENERATOR_VERSION,
        "program_sha256": hashlib.sha256(program().encode()).hexdigest(),
        "bands": [{"name": name, "min_pivots": lo, "max_pivots_exclusive": hi} for name, lo, hi in BANDS],
        "per_band": PER_BAND,
        "examined": examined,
        "outside_bands": outside,
        "failed": failed,
        "first_index": start,
        "selected": selected,
    }


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m execbench.families.state.netsimplex")
    sub = parser.add_subparsers(dest="command", required=True)
    cmd = sub.add_parser("select", help="examine generated candidates and write selection.json")
    cmd.add_argument("--max-candidates", type=int, default=2000)
    cmd.add_argument("--out", type=Path, default=SELECTION)
    args = parser.parse_args(argv)
    result = select(args.max_candidates)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"examined {result['examined']}, selected {len(result['selected'])} -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
