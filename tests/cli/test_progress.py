"""Progress in logs: off a terminal, a bar prints plain lines per tenth and at completion."""

from __future__ import annotations

import io

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn

from execbench.progress import LoggedProgress


def run_bar(console: Console, total: int) -> str:
    with LoggedProgress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                        console=console, transient=False, every=3600) as bar:
        handle = bar.add_task("build [b]repo[/]", total=None, tasks=0)
        for done in range(1, total + 1):
            bar.update(handle, completed=done, total=total, tasks=done * 3)
    return console.file.getvalue()


def test_plain_lines_per_tenth_and_at_completion_off_a_terminal():
    text = run_bar(Console(file=io.StringIO(), force_terminal=False, width=100), 40)
    lines = [line for line in text.splitlines() if line.startswith("build repo: ")]
    assert [line.split(" (")[0] for line in lines] == [f"build repo: {n}/40" for n in range(4, 41, 4)]
    assert lines[-1].startswith("build repo: 40/40 (tasks 120), ") and lines[-1].endswith(" s")


def test_no_extra_lines_on_a_terminal():
    text = run_bar(Console(file=io.StringIO(), force_terminal=True, width=100), 40)
    assert "build repo: 4/40" not in text
