"""A minimal execbench family: what does a short Python program print?

One source is a directory of ``*.py`` programs. Each program is one candidate; building it runs
the program in execbench's sandbox under two hash seeds and admits it when both runs succeed and
print the same text (the answer). The prompt shows the program; grading compares the model's
reply with that text (the reply is only compared, never run). docs/writing-a-family.md walks
through this file; ``pyproject.toml`` registers it under the entry point group ``execbench.families``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterable, Iterator, TypedDict

from execbench.contract import BuildContext, Candidate, Family, Licenses, Message, Outcome, Prompt, SourceError
from execbench.dataset import Task, make_id
from execbench.grading import NO_ANSWER, OK, Score, strip_reasoning


class Payload(TypedDict):
    """Everything an outcome depends on (it is hashed into the build-cache key)."""

    source: str  # the source's name: the directory's
    name: str  # the program's file name, without .py
    program: str


class Options(TypedDict):
    seconds: float  # each run's wall-clock limit
    seeds: list[int]  # the PYTHONHASHSEED of each run: all must print the same


DEFAULT_OPTIONS: Options = {"seconds": 5.0, "seeds": [0, 1]}
FENCE = re.compile(r"```[a-z]*\n(.*?)```", re.DOTALL)


def _run(program: str, seed: int, seconds: float) -> tuple[bool, str, str]:
    """(ok, stdout, why not) of one sandboxed run of ``program``."""
    from execbench.sandbox import Limits, run_python

    result = run_python(["main.py"], files={"main.py": program.encode()}, env={"PYTHONHASHSEED": str(seed)},
                        limits=Limits(wall_seconds=seconds))
    return result.ok, result.stdout.decode(errors="replace"), "" if result.ok else result.reason()


def _answer(response: str) -> str | None:
    """The reply's printed text: its last fenced block, else the whole reply (reasoning removed)."""
    text = strip_reasoning(response)
    blocks = FENCE.findall(text)
    answer = blocks[-1] if blocks else text
    return answer.strip() or None


class StdoutFamily(Family[Payload, Options]):
    name = "stdout"
    version = "1"  # bump when outcomes change: it is part of every build-cache key
    arms = {"output": ("text",)}  # one arm; its answers are text
    variants = ("direct",)
    default_options = dict(DEFAULT_OPTIONS)
    # optional parts (execbench.contract.capabilities): here only the license of the shipped programs
    capabilities = (Licenses(by_source={"programs": "Apache-2.0 (the example's own programs)"}),)

    def candidates(self, sources: list[str], options: Options,
                   context: BuildContext | None = None) -> Iterator[Candidate[Payload]]:
        for source in sources:
            folder = Path(source)
            if not folder.is_dir():
                raise SourceError(f"{source}: not a directory of .py programs")
            for path in sorted(folder.glob("*.py")):
                payload: Payload = {"source": folder.name, "name": path.stem, "program": path.read_text()}
                yield Candidate(f"{folder.name}/{path.stem}", payload)

    def build_candidate(self, candidate: Candidate[Payload], options: Options) -> Outcome:
        outcome = Outcome()
        payload = candidate.payload
        printed = set()
        for seed in options["seeds"]:
            ok, stdout, why = _run(payload["program"], seed, float(options["seconds"]))
            if not ok:
                outcome.reject(candidate.key, "run", f"the program failed: {why}")
                return outcome
            printed.add(stdout)
        if len(printed) != 1:
            outcome.reject(candidate.key, "determinism", "runs under different hash seeds print different text")
            return outcome
        task = Task(id=make_id(self.name, payload["source"], payload["name"], "output"), family=self.name,
                    arm="output", source_id=candidate.key, language="python",
                    prompt_fields={"program": payload["program"]}, answer=printed.pop().strip(), answer_kind="text",
                    metrics={"loc": len(payload["program"].splitlines())})
        outcome.add(task)
        return outcome

    def prompt(self, task: Task, variant: str = "direct") -> Prompt:
        text = (f"What does this Python program print?\n\n```python\n{task.prompt_fields['program']}```\n\n"
                "Reply with exactly the printed text inside one ``` block.")
        return Prompt(messages=[Message("user", text)], template="stdout/direct", version="1")

    def grade(self, task: Task, response: str) -> Score:
        answer = _answer(response)
        if answer is None:
            return Score(correct=False, status=NO_ANSWER, extracted=None)
        return Score(correct=answer == task.answer, status=OK, extracted=answer)

    def summarize(self, results: Iterable[tuple[Task, Score]]) -> dict[str, Any]:
        rows = list(results)
        return {"n": len(rows), "accuracy": sum(s.correct for _, s in rows) / len(rows) if rows else None}


FAMILY = StdoutFamily()
