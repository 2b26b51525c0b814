"""Python checkpoint instrumentation: placement, verification, refusals (no execution)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from execbench.contract import SourceError
from execbench.families.state import instrument_py
from execbench.families.state.jobs import dump, python_job, run
from execbench.families.state.instrument_py import InstrumentError, instrument

FIGURE1 = textwrap.dedent("""\
    import sys

    data = sys.stdin.read().split()
    S = data[1]
    cnt0 = cnt1 = 0
    ans = 0
    for ch in S:  # the recurrence
        if ch == '0':
            dp0 = 1
            dp1 = cnt0 + cnt1
        else:
            dp0 = cnt1
            dp1 = cnt0 + 1
        ans += dp1
        cnt0, cnt1 = (dp0, dp1)
    print(ans)
    """)


def strip_header(text: str) -> str:
    return text.split("def _checkpoint_emit", 1)[1].split("\n\n\n", 1)[1]


def test_inside_arm_is_the_paper_transformation_and_keeps_the_clean_text():
    text = instrument(FIGURE1, 7, ["ans", "cnt1", "dp1"], "inside", 502)
    body = strip_header(text)
    assert "    _checkpoint_count += 1\n    if _checkpoint_count == 502:\n" \
           '        _checkpoint_emit({"ans": ans, "cnt1": cnt1, "dp1": dp1})\n        raise SystemExit\n' in body
    # the clean lines (comments included) are all still there, in order
    removed = [line for line in body.splitlines() if "_checkpoint" not in line and "raise SystemExit" not in line]
    assert "\n".join(removed) == FIGURE1.rstrip("\n")
    # the header is inserted before the first statement and the program still parses
    assert text.index("import json as _checkpoint_json") < text.index("import sys\n")
    ast.parse(text)


def test_post_arm_checks_after_the_loop_and_counts_in_the_body():
    text = instrument(FIGURE1, 7, ["ans"], "post", 502)
    body = strip_header(text)
    lines = body.splitlines()
    loop = lines.index("for ch in S:  # the recurrence")
    assert lines[loop + 1] == "    _checkpoint_count += 1"
    after = lines.index("if _checkpoint_count >= 502:")
    assert lines[after - 1] == "    cnt0, cnt1 = (dp0, dp1)"
    assert lines[after + 1:after + 3] == ['    _checkpoint_emit({"ans": ans})', "    raise SystemExit"]
    assert lines[after + 3] == "print(ans)"


def test_loop_in_a_function_gets_a_global_declaration_after_the_docstring():
    source = textwrap.dedent('''\
        def solve(values):
            """Sum with a loop."""
            total = 0
            for v in values:
                total += v
            else:
                total += 1
            return total


        print(solve([1, 2, 3]))
        ''')
    text = instrument(source, 4, ["total", "v"], "post", 2)
    body = strip_header(text).splitlines()
    assert body[1:3] == ['    """Sum with a loop."""', "    global _checkpoint_count"]
    # the post check follows the whole statement, else clause included
    i = body.index("        total += 1")
    assert body[i + 1] == "    if _checkpoint_count >= 2:"
    post, = run([python_job("post", "post.py", text, cpu=10, wall=30, memory_mb=1024)])
    assert post.ok and post.stdout == b'{"total":7,"v":3}\n'


def test_nested_while_with_tabs_and_docstring_module():
    source = '"""Doc."""\nfrom __future__ import annotations\ni = 0\nwhile i < 3:\n\tj = 0\n\twhile j < i:\n\t\tj += 1\n\ti += 1\n'
    text = instrument(source, 6, ["i", "j"], "inside", 2)
    assert text.startswith('"""Doc."""\nfrom __future__ import annotations\nimport json as _checkpoint_json')
    assert "\t\t_checkpoint_count += 1\n\t\tif _checkpoint_count == 2:\n\t\t\t_checkpoint_emit(" in text


def test_refusals():
    with pytest.raises(InstrumentError, match="no for/while loop starts on line 3"):
        instrument(FIGURE1, 3, ["ans"], "inside", 1)
    with pytest.raises(InstrumentError, match="header line"):
        instrument("for i in range(3): print(i)\n", 1, ["i"], "inside", 1)
    with pytest.raises(SourceError, match="not a variable name"):
        instrument(FIGURE1, 7, ["ans[0]"], "inside", 1)
    with pytest.raises(SourceError, match="repeat"):
        instrument(FIGURE1, 7, ["ans", "ans"], "inside", 1)
    with pytest.raises(InstrumentError, match="already uses names"):
        instrument("_checkpoint_x = 1\nfor i in range(2):\n    pass\n", 2, ["i"], "inside", 1)
    with pytest.raises(SourceError, match="does not parse"):
        instrument("for i in range(:\n", 1, ["i"], "inside", 1)


def test_dotted_fields_and_loop_inventory():
    source = "class P:\n    pass\n\n\np = P()\np.x = 0\nfor k in range(4):\n    p.x += k\n"
    text = instrument(source, 7, ["p.x", "k"], "inside", 3)
    assert '_checkpoint_emit({"p.x": p.x, "k": k})' in text
    loops = instrument_py.loops(FIGURE1)
    assert [(lp.line, lp.kind, lp.scope, lp.targets) for lp in loops] == [(7, "for", "<module>", ("ch",))]


def test_profile_program_counts_and_snapshots_every_loop():
    source = "total = 0\nfor i in range(4):\n    for j in range(i):\n        total += j\nprint(total)\n"
    loops = instrument_py.instrumentable(source)
    assert [lp.line for lp in loops] == [2, 3]
    text = instrument_py.profile_program(source, loops, {1: (3, ["total", "i", "j"])})
    job, = run([python_job("p", "p.py", text, cpu=10, wall=30, memory_mb=1024,
                           dump_global=instrument_py.PROFILE)])
    assert job.stdout == b"4\n"
    profile, _ = dump(job)
    assert profile["counts"] == [4, 6] and profile["exits"] == [1, 4] and profile["last_exit"] == [4, 6]
    snaps = profile["snapshots"]
    assert snaps["1:before"] == {"total": {"json": "0"}, "i": {"json": "2"}, "j": {"json": "0"}}
    assert snaps["1:inside"] == {"total": {"json": "0"}, "i": {"json": "2"}, "j": {"json": "1"}}
    assert snaps["1:post"] == {"total": {"json": "1"}, "i": {"json": "2"}, "j": {"json": "1"}}


def test_scope_names_are_bound_variables_not_functions_or_imports():
    source = textwrap.dedent("""\
        import math
        def helper(x):
            return x
        def main(n, *rest):
            acc = []
            best = None
            for i in range(n):
                acc.append(helper(i))
                best = i
            unused = 1
            return acc
        """)
    names, live = instrument_py.scope_names(source, 7)
    assert names == ["n", "rest", "acc", "best", "i", "unused"]
    assert {"acc", "i", "n"} <= live and "unused" not in live
