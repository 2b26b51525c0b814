"""Input perturbation: call arguments and standard input (no model, no execution)."""

from __future__ import annotations

import ast
import random

import pytest

from execbench.mutation.inputs import argument_donors, perturb_call, perturb_stdin, string_tags
from execbench.mutation.program import MutationError


def test_unparsable_or_huge_calls_are_refused():
    with pytest.raises(MutationError):
        perturb_call("f(" + "[" * 30_000, random.Random(0))



def test_perturbed_calls_keep_callee_keywords_and_shape():
    call = "solve([3, 1, 2], 'abc', k=4, flag=True)"
    outs = {perturb_call(call, random.Random(seed)) for seed in range(20)}
    assert len(outs) > 10
    for out in outs:
        tree = ast.parse(out, mode="eval").body
        assert tree.func.id == "solve" and [k.arg for k in tree.keywords] == ["k", "flag"]
        first = ast.literal_eval(tree.args[0])
        assert isinstance(first, list) and all(isinstance(v, int) for v in first)
        assert isinstance(ast.literal_eval(tree.args[1]), str)


def test_empty_inputs_are_filled_from_donors_and_tags_are_swapped_not_misspelled():
    calls = ["f([])", "f([5, 6, 7])", "f([2])"]
    donors = argument_donors(calls)
    filled = {perturb_call("f([])", random.Random(seed), donors=donors) for seed in range(10)}
    assert filled <= {"f([5])", "f([6])", "f([7])", "f([2])"} and filled
    program = "def run(ops):\n    for op in ops:\n        if op == 'push': pass\n        elif op == 'pop': pass\n"
    tags = string_tags(program)
    for seed in range(20):
        out = ast.literal_eval(ast.parse(perturb_call("run(['push', 'pop'])", random.Random(seed), tags),
                                         mode="eval").body.args[0])
        assert set(out) <= {"push", "pop"}


def test_non_literal_arguments_get_their_constants_perturbed():
    call = "main([(i % 4, i + 2) for i in range(8)])"
    outs = {perturb_call(call, random.Random(seed)) for seed in range(10)}
    assert call not in outs or len(outs) > 1
    for out in outs:
        assert out.startswith("main([(i % ") and "for i in range(" in out


def test_stdin_keeps_its_first_line_layout_column_ranges_and_alphabets():
    text = "3 3 0\n0 1 4\n1 2 -2\n0 2 5\nS..#.G 00110\n"
    for seed in range(20):
        out = perturb_stdin(text, random.Random(seed))
        lines = out.splitlines()
        assert out != text and lines[0] == "3 3 0" and len(lines) == 5
        for line in lines[1:4]:
            u, v, w = map(int, line.split())
            assert 0 <= u <= 1 and 1 <= v <= 2  # node ids stay within their column's range
        grid, bits = lines[4].split()
        assert sorted(grid) == sorted("S..#.G") and sorted(bits) == sorted("00110")
