"""The state meter (tracing/state.py, observing the shared tracer) on programs whose |S_t| is known by hand,
run in the sandbox through the state family's batch runner."""

from __future__ import annotations

import textwrap

from execbench.families.state.jobs import metrics, python_job, run

ALIASES = textwrap.dedent("""\
    a = [1, 2, 3]
    b = a
    c = {"k": [a, 5]}
    print(len(c))
    """)
# |S_t| before each line runs: 0; a=1+3; b aliases a (+0); c = dict 1 + key 1 + list (1 + a:0 + 5:1)
ALIASES_SIZES = [0, 4, 4, 8]

OBJECTS = textwrap.dedent("""\
    class P:
        def __init__(self):
            self.x = 1
            self.ys = [1, 2]


    def f(n):
        p = P()
        return n + p.x


    print(f(2))
    """)
# lines 1, 1 and 2 (the class body), 7, 12: no state (classes and functions are not state); in f:
# line 8: n -> 1; line 3: self (empty instance, 1) + n -> 2; line 4: self{x} 2 + n -> 3;
# line 9: n 1 + p (1 + x 1 + ys 3) -> 6
OBJECTS_SIZES = [0, 0, 0, 0, 0, 1, 2, 3, 6]

NESTED = textwrap.dedent("""\
    g = {1: {2: {"w": 3}}, 4: {}}
    h = [g[1][2], [5, 6], [5, 6]]
    k = {(1, 2): "x"}
    print(len(k))
    """)
# the walker's shortcuts (all-atomic containers sized at once, inside and outside a parent's
# loop): g = 1 + keys 2 + g[1] (1 + key 1 + {"w": 3} 3) + g[4] 1 = 9; h = 1 + the aliased
# dict 0 + two distinct [5, 6] 3 + 3 = 7; k = 1 + key (1, 2) 3 + "x" 1 = 5
NESTED_SIZES = [0, 9, 16, 21]
# work per observation: 1 + (dicts 2n + 1, sequences n + 1, each distinct container once)
NESTED_WORK = 1 + (1 + 12) + (1 + 12 + 10) + (1 + 22 + 6)


def measure(program: str, **measure):
    limits = {"cpu": 10, "wall": 30, "memory_mb": 2048}
    job, plain = run([python_job("m", "p.py", program, measure={"state": True, **measure}, **limits),
                      python_job("plain", "p.py", program, measure={"state": False, **measure}, **limits)])
    assert job.ok, job.reason()
    assert metrics(plain)["opcodes"] == metrics(job)["opcodes"]
    return metrics(job)


def test_sizes_follow_the_documented_convention():
    for program, sizes in ((ALIASES, ALIASES_SIZES), (OBJECTS, OBJECTS_SIZES)):
        metrics = measure(program)
        assert metrics["line_events"] == len(sizes)
        assert metrics["state_load"] == sum(sizes)
        assert metrics["peak_state"] == max(sizes)
        assert metrics["state_stride"] == 1 and metrics["opcodes"] > metrics["line_events"]


def test_nested_and_aliased_containers_count_once_with_their_work():
    metrics = measure(NESTED)
    assert metrics["line_events"] == len(NESTED_SIZES) and metrics["state_load"] == sum(NESTED_SIZES)
    assert metrics["peak_state"] == 21 and metrics["state_work"] == NESTED_WORK


def test_budget_switches_to_stride_sampling_with_a_close_estimate():
    program = "data = list(range(300))\ntotal = 0\nfor x in data:\n    total += x\nprint(total)\n"
    exact = measure(program)
    sampled = measure(program, state_budget=2000)
    assert exact["state_stride"] == 1 and sampled["state_stride"] > 1
    assert sampled["state_samples"] < exact["state_samples"]
    assert abs(sampled["state_load"] - exact["state_load"]) / exact["state_load"] < 0.05
    assert sampled["peak_state"] == exact["peak_state"] == 1 + 300 + 1 + 1


def test_line_event_cap_stops_tracing():
    metrics = measure("i = 0\nwhile i < 10_000:\n    i += 1\n", max_line_events=500)
    assert metrics["status"] == "too_large" and "500" in metrics["too_large"]
