"""``--mode agent``: a read-only, tool-using agent (RepoReason's ReadOnlyAgent) as an Inspect solver.

A family supports agent mode when it has an ``agent`` prompt variant and a browser class
(its ``AgentBrowser`` capability, e.g. ``families/repo/agent_tools.py``) whose
``for_task(task)`` gives an object with ``list_dir``, ``read_file`` and ``search``,
confined to the task's repository (Inspect's ``local`` sandbox is no boundary, so the
confinement lives in the family). The agent is Inspect's ``react()`` with those three
tools and a ``finish`` tool whose content is the answer (``answer_only``, so the graded
text is exactly what the model submitted). It uses the family's agent prompt as is
(no extra system prompt). Imports Inspect: import lazily.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.agent import AgentSubmit, as_solver, react
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.tool import ToolDef, ToolError
from inspect_ai.util import LimitExceededError

from execbench import registry
from execbench.contract import AgentBrowser
from execbench.eval import protocol

DEFAULT_MESSAGE_LIMIT = 60  # ~30 tool rounds; override with --message-limit


def _browser(task: Any) -> Any:
    declared = registry.get(task.family).capability(AgentBrowser)
    if declared is None:
        raise ValueError(f"family {task.family!r} has no agent browser")
    return declared.browser().for_task(task)


def _tools(browser: Any) -> list[ToolDef]:
    def call(method: str, *args: Any, **kwargs: Any) -> str:
        try:
            result = getattr(browser, method)(*args, **kwargs)
        except (ValueError, OSError) as exc:  # the family's ToolError is a ValueError
            raise ToolError(str(exc)) from None
        if isinstance(result, list):
            return "\n".join(result) if result else "(nothing)"
        return str(result)

    async def list_dir(path: str = ".") -> str:
        """List a directory of the repository (directories end with '/').

        Args:
            path: Directory relative to the repository root.
        """
        return call("list_dir", path)

    async def read_file(path: str, start_line: int = 1, end_line: int | None = None) -> str:
        """Read numbered lines of a text file of the repository.

        Args:
            path: File path relative to the repository root.
            start_line: First line to show (1-based).
            end_line: Last line to show (inclusive); default: the end of the file.
        """
        return call("read_file", path, start_line, end_line)

    async def search(pattern: str, path: str = ".", regex: bool = False, glob: str = "*.py") -> str:
        """Search the repository's files for lines containing a pattern.

        Args:
            pattern: Text to find (an RE2 regular expression if regex is true).
            path: File or directory to search, relative to the repository root.
            regex: Treat the pattern as a regular expression.
            glob: Only search files whose name matches this glob.
        """
        return call("search", pattern, path, regex=regex, glob=glob)

    return [ToolDef(list_dir), ToolDef(read_file), ToolDef(search)]


@solver
def read_only_agent(dataset: str, family: str | None = None) -> Any:
    """Per sample: the family's browser for the task, then react() with finish(answer)."""
    tasks = {task.id: task for task in protocol.load_tasks(dataset, family)}

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.metadata.pop("error", None)
        state.metadata.pop("limit", None)
        task = tasks[str(state.sample_id)]
        try:
            agent = react(
                prompt=None,
                tools=_tools(_browser(task)),
                submit=AgentSubmit(name="finish", description="Submit the final answer: only the expression.",
                                   answer_only=True),
            )
            return await as_solver(agent)(state, generate)
        except LimitExceededError as exc:  # a budget, not a failed request: scored as a truncated answer
            state.metadata["limit"] = f"{getattr(exc, 'type', None) or 'sample'}_limit"
            raise
        except Exception as exc:  # recorded like a failed request, then retried or scored
            state.metadata["error"] = f"{type(exc).__name__}: {exc}"[:4000]
            raise

    return solve
