"""Source-level mutation operators: renaming, literals, comments (no model).

Behaviour is compared by running original and mutant in the real sandbox.
"""

from __future__ import annotations

import ast
import random
import textwrap

import pytest

from execbench import sandbox
from execbench.mutation import values
from execbench.mutation.inputs import call_names
from execbench.mutation.program import MutationError, mutate_program
from execbench.mutation.text import strip_comments
from execbench.sources import humaneval

TRICKY = textwrap.dedent('''\
    import math
    from functools import reduce as red
    LIMIT = 10


    class Box:
        size = 3

        def __init__(self, width, *rest, scale=2, **opts):
            self.width = width * scale
            total = 0
            for item in rest:
                total += item
            self.total = total

        def area(self):
            side = self.width
            return side * side + Box.size + self.total


    def outer(values, limit):
        count = 0
        best = None

        def bump(step):
            nonlocal count
            count += step
            return count

        for v in values:
            if (w := v * 2) > limit:
                bump(w)
            try:
                best = max(best or 0, v) if v != 3 else v + None
            except TypeError as err:
                best = str(err)[:5]
        squares = [q * q for q in values if q > 0]
        pairs = {k: j for k, j in enumerate(values)}
        g = (lambda z, y=LIMIT: z + y)(3)
        return count, best, squares, pairs, g, math.sqrt(4), w


    def counter():
        global LIMIT
        LIMIT = LIMIT + 1
        return LIMIT


    def entry(xs):
        return outer(xs, 3), Box(2, 1, 2).area(), counter(), red(lambda a, b: a + b, xs)
    ''')


def run(program: str, expression: str) -> str:
    result = sandbox.run_python(["prog.py"], files={"prog.py": program + f"\nprint(repr({expression}))\n"})
    assert result.ok, result.stderr.decode()
    return result.stdout.decode()


def renamed_only(program: str, seed: int = 1, **kwargs) -> str:
    return mutate_program(program, random.Random(seed), literals=False, **kwargs).text


def test_renaming_is_consistent_and_keeps_behaviour():
    mutant = mutate_program(TRICKY, random.Random(1), literals=False, protected={"entry"})
    assert "rename" in mutant.operators
    tree = ast.parse(mutant.text)
    defined = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    assert "entry" in defined and "outer" not in defined and "Box" not in defined
    # attributes, imports and dunders are never renamed; class names keep their style
    assert "self.width" in mutant.text and ".size" in mutant.text and "math.sqrt" in mutant.text
    assert "red(" in mutant.text and "__init__" in mutant.text
    assert mutant.renames["<module>:Box"][0].isupper() and mutant.renames["<module>:LIMIT"].isupper()
    assert run(mutant.text, "entry([1, 3, 5])") == run(TRICKY, "entry([1, 3, 5])")


def test_names_visible_to_callers_are_protected():
    program = textwrap.dedent('''\
        def api(alpha, beta=1):
            gamma = alpha + beta
            return gamma

        def other(delta):
            return helper(delta)

        def helper(eps):
            return eps

        def fmt(zeta):
            return getattr(zeta, "real")
        ''')
    calls = ["api(1, beta=2)", "other(helper(3))"]
    mutant = mutate_program(program, random.Random(0), literals=False, protected=call_names(calls) | {"api"})
    assert "def api(" in mutant.text and "beta=1" in mutant.text  # used as a keyword somewhere
    assert "def helper(" in mutant.text  # a call spells it
    assert "alpha" not in mutant.text and "gamma" not in mutant.text
    assert "def other(" in mutant.text and "def fmt(" not in mutant.text  # only what calls spell is kept
    for call in calls:
        assert run(mutant.text, call) == run(program, call)


def test_star_kwargs_decorators_strings_and_dynamic_scopes_block_renaming():
    star = "def f(a, b):\n    return a - b\n\nprint(f(**{'a': 1, 'b': 2}))\n"
    assert "def f(a, b)" in renamed_only(star, protected={"f"})
    decorated = "import functools\n\n@functools.lru_cache\ndef f(a):\n    t = a\n    return t\n"
    text = renamed_only(decorated, protected={"f"})
    assert "def f(a)" in text and " t = " not in text
    spelled = "def f(kw):\n    return dict(kw=kw)\n\ndef g(n):\n    return f(**{'kw': n})\n"
    assert "kw" in renamed_only(spelled, protected={"g"})
    dynamic = "def f(a):\n    b = a\n    return locals()['b']\n"
    mutant = mutate_program(dynamic, random.Random(0), literals=False)
    assert mutant.text == dynamic and mutant.renames == {} and "rename skipped" in mutant.notes[0]


def test_nonascii_text_before_a_name_on_the_same_line():
    program = 'def f(x):\n    s = "é€"; y = x + len(s)\n    return y\n'
    mutant = mutate_program(program, random.Random(3), literals=False, protected={"f"})
    assert '"é€"' in mutant.text and "y" not in mutant.text.replace("def f(", "")
    assert run(mutant.text, "f(2)") == run(program, "f(2)")


def test_literals_spare_docstrings_fstrings_keys_and_structural_constants():
    program = textwrap.dedent('''\
        def f(n):
            """Return 7 * n (docstring 42)."""
            table = {"key": 7}
            label = f"n={n} of 9"
            return table["key"] * n + 13 - 1 + 0 + len("abc") + 2.5
        ''')
    seen = set()
    for seed in range(30):
        mutant = mutate_program(program, random.Random(seed), rename=False, max_literals=3)
        assert '"""Return 7 * n (docstring 42)."""' in mutant.text
        assert '{"key": 7}' not in mutant.text or 'table["key"]' in mutant.text
        assert 'f"n={n} of 9"' in mutant.text and "+ 0 +" in mutant.text and "- 1 +" in mutant.text
        assert len(mutant.literals) <= 3
        seen.update(change["old"] for change in mutant.literals)
    assert seen <= {"7", "13", '"abc"', "2.5"} and len(seen) >= 3
    assert "42" not in seen and '"key"' not in seen


def test_same_seed_same_mutant_and_other_seeds_differ():
    program = humaneval.problems()[12].program
    first = mutate_program(program, random.Random("s|0"))
    again = mutate_program(program, random.Random("s|0"))
    other = mutate_program(program, random.Random("s|1"))
    assert first.text == again.text and first.renames == again.renames
    assert other.text != first.text


def test_comments_are_removed_with_a_line_map():
    program = "# header\nx = 1  # one\ns = '# not a comment'\n\n# two\ny = x + 1\n"
    text, mapping, removed = strip_comments(program)
    assert text == "x = 1\ns = '# not a comment'\n\ny = x + 1\n"
    assert removed == 3 and mapping == {1: 2, 2: 3, 3: 4, 4: 6}
    mutant = mutate_program(program, random.Random(0), rename=False, literals=False)
    assert mutant.text == text and mutant.old_line(4) == 6 and mutant.new_line(6) == 4


def test_every_humaneval_program_mutates_and_parses():
    problems = humaneval.problems()
    renamed = 0
    for problem in problems:
        calls = humaneval.candidate_calls(problem)
        mutant = mutate_program(problem.program, random.Random(problem.task_id),
                                protected=call_names(calls) | {problem.entry_point})
        ast.parse(mutant.text)
        assert f"def {problem.entry_point}(" in mutant.text
        renamed += bool(mutant.renames)
    assert renamed >= 0.9 * len(problems)


def test_unparsable_or_huge_programs_are_refused():
    with pytest.raises(MutationError, match="does not parse"):
        mutate_program("def f(:\n", random.Random(0))
    with pytest.raises(MutationError, match="too large"):
        mutate_program("x = 1\n" * 100_000, random.Random(0))


def test_values_keep_types_order_and_render_deterministically():
    rng = random.Random(0)
    for _ in range(50):
        out = values.perturb_value([1, 2, 5, 9], rng)
        assert out == sorted(out) and all(isinstance(v, int) for v in out)
        text = values.perturb_str("Hello42", rng)
        assert text != "Hello42"
    assert values.render({"b", "a", "c"}) == "{'a', 'b', 'c'}"
    assert values.render(frozenset()) == "frozenset()" and values.render((1,)) == "(1,)"
    assert values.perturb_float(0.5, random.Random(1)) != 0.5
