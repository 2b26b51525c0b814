"""Repo prompts: versioned templates with the type-specific hints of RepoReason C.1."""

from __future__ import annotations

import pytest

from execbench.dataset import Task
from execbench.families.repo import prompt
from execbench.families.repo.annotate import annotation_prompt, parse_label


def _task(**fields) -> Task:
    base = {"masked_assertion": "assert ___ == len(cache)", "test_source": "def test_update(self):\n"
            "    cache = self.Cache(maxsize=2)\n    assert ___ == len(cache)  # Question\n",
            "test_context": "import unittest\nclass LRUCacheTest(unittest.TestCase):\n    Cache = LRUCache",
            "input_parameters": '{"self": "<tests.test_lru.LRUCacheTest>"}', "answer_form": "literal",
            "answer_type": "int", "library": "cachetools", "version": "8.0.2", "test_file": "tests/test_lru.py",
            "function_file": "tests/__init__.py", "repo_root": "/x"}
    base.update(fields)
    return Task(id="repo/cachetools-8.0.2/t#masked-assertion", family="repo", arm="masked-assertion",
                source_id="s", language="python", prompt_fields=base, answer="2", answer_kind="python-literal")


@pytest.mark.parametrize("variant", list(prompt.VARIANTS))
def test_variants_render_with_versions(variant):
    rendered = prompt.render(_task(), variant)
    text = rendered.messages[0].content
    assert rendered.template == f"repo/{variant}" and rendered.version == "3"
    assert "Blank Assertion: assert ___ == len(cache)" in text
    assert "CRITICAL REQUIREMENT: The answer MUST be a literal integer value." in text
    assert "assert ___ == len(cache)  # Question" in text
    assert '"self": "<tests.test_lru.LRUCacheTest>"' in text
    assert ("ReadOnlyAgent" in text) == (variant == "agent")
    assert "finish tool" in text if variant == "agent" else "ANSWER:" in text if variant == "cot" else True


def test_test_file_definitions_are_carried_when_present():
    text = prompt.render(_task(test_definitions="NORM_DATA = [0.5, 1.5]"), "direct").messages[0].content
    assert "Definitions from the same test file that the test uses" in text and "NORM_DATA = [0.5, 1.5]" in text
    assert "Definitions from the same test file" not in prompt.render(_task(), "direct").messages[0].content


def test_hints_by_form():
    assert "string literal" in prompt.hint("literal", "str")
    assert "constructor call" in prompt.hint("constructor", "yarl.URL")
    assert "SymPy" in prompt.hint("sympy_expression", "sympy.core.numbers.Rational")
    assert "global constant" in prompt.hint("global_constant", "int")
    # issue 12: a hint never names the single possible value
    assert "None" not in prompt.hint("literal", "NoneType")
    assert prompt.hint("literal", "NoneType") == prompt.hint("literal", "some.Type")
    with pytest.raises(ValueError):
        prompt.render(_task(), "nope")


def test_annotation_prompt_and_label_parsing():
    task = _task().to_json()
    text = annotation_prompt(task)
    assert "Easy" in text and "metaprogramming" in text and "Correct answer: 2" in text
    assert parse_label("Label: hard.") == "Hard"
    assert parse_label("I'd say Medium") == "Medium"
    assert parse_label("unsure") is None
