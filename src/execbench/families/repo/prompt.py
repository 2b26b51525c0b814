"""Repo prompts (RepoReason appendix C.1), rendered from versioned templates.

Variants: ``direct`` (answer only), ``cot`` (reasoning, then ``ANSWER: <expression>``) and
``agent`` (the paper's agentic-search prompt, for a read-only agent that browses the
repository with :mod:`execbench.families.repo.agent_tools` and answers with a finish tool).
Every template starts with ``{# version: N #}``. The type-specific hint follows C.1.
"""

from __future__ import annotations

from pathlib import Path

from execbench.dataset import Task
from execbench.contract import Message, Prompt
from execbench.families.templates import PromptTemplates

TEMPLATES = PromptTemplates(Path(__file__).parent / "prompts")
VARIANTS = {"direct": "direct", "cot": "cot", "agent": "agent"}

_EXAMPLES = ("Type-specific examples: Boolean: True or False (NOT 'x == y' or 'bool(x)') String: \"hello\" "
             "(NOT 'str_var' or 'x.name') Number: 42 (NOT 'num_var' or 'len(x)') List: [1, 2, 3] (NOT "
             "'list_var' or 'list(x)') Dict: {\"a\": 1} (NOT 'dict_var' or 'dict(x)')")
_LITERAL = {
    "int": "a literal integer value", "float": "a literal float value", "complex": "a literal complex number",
    "str": "a string literal", "bytes": "a bytes literal", "bool": "a literal boolean value (True or False)",
    "list": "a literal list", "tuple": "a literal tuple", "dict": "a literal dict",
    "set": "a literal set (set() when empty)", "frozenset": "a frozenset(...) call with a literal set",
}


def hint(answer_form: str, answer_type: str) -> str:
    """The type-specific hint of RepoReason C.1 for an answer's form and runtime type. A hint
    never names a single possible value ("must guide reasoning without leaking the answer",
    appendix E.5.1): ``None`` gets the hint of literals in general, ``bool`` names both values."""
    if answer_form == "literal":
        what = _LITERAL.get(answer_type, "a literal value")
        return (f"CRITICAL REQUIREMENT: The answer MUST be {what}. IMPORTANT: Return ONLY the literal value, "
                f"NOT an expression or variable name. {_EXAMPLES}")
    if answer_form == "global_constant":
        return ("CRITICAL REQUIREMENT: The answer MUST be a global constant (an UPPER_CASE name) from the test "
                "module or the library. Return ONLY the constant's name.")
    if answer_form == "attribute":
        return ("CRITICAL REQUIREMENT: The answer MUST be an attribute access such as Module.NAME or Class.attr "
                "(no call parentheses). Return ONLY that expression.")
    if answer_form == "constructor":
        return ("CRITICAL REQUIREMENT: The answer MUST be a constructor call from the source code, "
                "ClassName(...) with literal arguments. Return ONLY that expression.")
    if answer_form == "sympy_expression":
        return ("CRITICAL REQUIREMENT: The answer MUST be a SymPy expression (for example Rational(1, 2) or "
                "x**2 + 1, using the names the test imports). Return ONLY the expression.")
    return "Return ONLY the answer expression."



def render(task: Task, variant: str = "direct") -> Prompt:
    try:
        template = VARIANTS[variant]
    except KeyError:
        raise ValueError(f"unknown repo prompt variant {variant!r}; known: {', '.join(VARIANTS)}") from None
    f = task.prompt_fields
    text = TEMPLATES.render(
        template,
        blank=f["masked_assertion"],
        hint=hint(f.get("answer_form", ""), f.get("answer_type", "")),
        agent=variant == "agent",
        library=f.get("library", ""),
        version=f.get("version", ""),
        function_file=f.get("function_file", f.get("test_file", "")),
        test_source=f["test_source"],
        test_context=f.get("test_context", ""),
        test_definitions=f.get("test_definitions", ""),
        has_class="class " in f.get("test_context", ""),
        input_parameters=f.get("input_parameters", "{}"),
    )
    return Prompt([Message("user", text.strip() + "\n")], template=f"repo/{variant}",
                  version=TEMPLATES.version(template))
