"""The README's two fresh-machine commands stay true: CI runs the second one verbatim."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_commands() -> list[str]:
    lines = (ROOT / "README.md").read_text().splitlines()
    assert lines[0] == "```", "the README opens with the commands block"
    return lines[1 : lines.index("```", 1)]


def test_exactly_two_commands_demo_first():
    commands = readme_commands()
    assert len(commands) == 2
    venv = "python3 -m venv .venv && . .venv/bin/activate && "
    assert commands[0].startswith(venv + "pip install -e . ") and commands[0].endswith("execbench demo")
    assert commands[1].startswith(venv + "pip install -e '.[test]'") and commands[1].endswith(
        "&& ruff check src tests benchmarks && mypy && python -m pytest")


def test_ci_runs_the_second_command_verbatim():
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert readme_commands()[1] in ci
    # ... from an empty environment, before the command makes it anew
    assert ci.index("rm -rf .venv") < ci.index(readme_commands()[1])
