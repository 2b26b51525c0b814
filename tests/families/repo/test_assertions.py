"""Finding assertions and rewriting test text without moving lines."""

from __future__ import annotations

import ast
import textwrap

from execbench.families.repo.selection import assertions as A

SOURCE = textwrap.dedent('''\
    import unittest

    class T(unittest.TestCase):
        @some.decorator
        def test_update(self):
            cache = self.Cache(maxsize=2)
            cache.update({1: 1, 2: 2})
            self.assertEqual(2, len(cache))
            for k in (1, 2):
                assert cache[k] == k
            with self.assertRaises(KeyError):
                cache[3]
            assert cache == {1: 1,
                             2: 2}, "message"

            def nested():
                assert False
            self.assertTrue(cache)
''')


def test_finds_assert_statements_and_unittest_calls_not_nested_defs():
    functions = A.test_functions(SOURCE)
    (key, function), = [(k, f) for k, f in functions.items() if k[0] == "T.test_update"]
    assert key == ("T.test_update", 4)  # co_firstlineno of a decorated function
    found = [(a.kind, a.op, a.line, a.method) for a in function.assertions]
    assert found == [("call", "==", 8, "assertEqual"), ("assert", "==", 10, None), ("assert", "==", 13, None),
                     ("call", "unary", 18, "assertTrue")]
    assert "cache" in function.local_names and "self" in function.local_names


def test_probe_and_verify_splices_keep_line_numbers():
    function = A.test_functions(SOURCE)[("T.test_update", 4)]
    multi = function.assertions[2]
    probed = A.apply(SOURCE, A.probe_splices(SOURCE, [("k", multi)]))
    assert probed.count("\n") == SOURCE.count("\n")
    tree = ast.parse(probed)
    assert "__execbench_probe__('k', 1, ({1: 1," in probed
    verified = A.apply(SOURCE, [A.verify_splice(SOURCE, "k", multi, 1, ["{1: 1, 2: 2}", "{2: 2, 1: 1}"])])
    assert verified.count("\n") == SOURCE.count("\n")
    ast.parse(verified)
    line = verified.splitlines()[12]
    assert line.strip().startswith("assert (__execbench_verify__('k', (cache), lambda __execbench_value__: "
                                   "bool(__execbench_value__ == {1: 1, 2: 2})")
    call = A.verify_splice(SOURCE, "j", function.assertions[0], 0, ["2"])
    assert call.text.startswith("(__execbench_verify__('j', (len(cache)), lambda __execbench_value__: "
                                "(self.assertEqual(2, __execbench_value__), True)[1])")
    del tree


def test_mask_text_hides_other_values_and_marks_the_question():
    function = A.test_functions(SOURCE)[("T.test_update", 4)]
    first, loop, multi = function.assertions[:3]
    text = A.mask_text(SOURCE, function, (multi, 1), [A.Span.of(first.operands[0])])
    assert text.startswith("@some.decorator\ndef test_update(self):\n")
    assert "self.assertEqual(___, len(cache))\n" in text
    assert 'assert cache == ___, "message"  # Question\n' in text
    assert A.statement_text(SOURCE, multi, 1) == "assert cache == ___, 'message'"
    assert A.statement_text(SOURCE, first, 0) == "self.assertEqual(___, len(cache))"
    del loop


def test_context_has_imports_and_class_attributes():
    source = "import x\nfrom y import z\n\nclass LRUTest(Base):\n    Cache = z.LRUCache\n\n    def test_a(self):\n        assert 1 == f()\n"
    function = A.test_functions(source)[("LRUTest.test_a", 7)]
    assert A.context_text(source, function) == "import x\nfrom y import z\nclass LRUTest(Base):\n    Cache = z.LRUCache"


def test_neutralized_probes_do_not_assert_and_keep_lines():
    source = ("def test_x(self):\n    assert f(1) == 7, (\n        'msg')\n    self.assertEqual(2,\n"
              "                     len(c))\n    assert g(2)\n    self.assertTrue(\n        h())\n")
    function = A.test_functions(source)[("test_x", 1)]
    items = [("k", a) for a in function.assertions if len(a.operands) == 2]
    out = A.apply(source, A.probe_splices(source, items) + A.neutralize_splices(function.assertions))
    assert out.count("\n") == source.count("\n")
    tree = ast.parse(out)
    assert not any(isinstance(n, ast.Assert) for n in ast.walk(tree))
    assert "assertEqual" not in out and "assertTrue" not in out
    assert "(__execbench_probe__('k', 0, (f(1))), __execbench_probe__('k', 1, (7))" in out
