"""A family providing the core members only (no builder module, no capability): the plug-in of
tests/contract/test_plugin_check.py, imported there and by its subprocesses."""

from __future__ import annotations

from typing import Iterable, Iterator

from execbench.contract import BuildContext, Candidate, Family, Message, Outcome, Prompt
from execbench.dataset import Task
from execbench.grading import Score


class Words(Family[dict[str, str], dict[str, object]]):
    """Upper-case a word: candidates and build_candidate overridden, nothing else."""

    name = "words"
    version = "1"
    arms = {"upper": ("text",)}

    def candidates(self, sources: list[str], options: dict[str, object],
                   context: BuildContext | None = None) -> Iterator[Candidate[dict[str, str]]]:
        return iter([Candidate(word, {"word": word}) for source in sources for word in source.split()])

    def build_candidate(self, candidate: Candidate[dict[str, str]], options: dict[str, object]) -> Outcome:
        word = candidate.payload["word"]
        if not word.isalpha():
            outcome = Outcome()
            outcome.reject(candidate.key, "check", "not a word")
            return outcome
        return Outcome(tasks=[{"id": f"words/mine/{word}#upper", "family": "words", "arm": "upper",
                               "source_id": f"mine/{word}", "language": "python", "prompt_fields": {"word": word},
                               "answer": word.upper(), "answer_kind": "text", "metrics": {}, "provenance": {}}])

    def prompt(self, task: Task, variant: str = "direct") -> Prompt:
        return Prompt([Message("user", f"Upper-case {task.prompt_fields['word']}")], "words/direct", "1")

    def grade(self, task: Task, response: str) -> Score:
        return Score(correct=response.strip() == task.answer, status="ok", extracted=response.strip())

    def summarize(self, results: Iterable[tuple[Task, Score]]) -> dict[str, int]:
        rows = list(results)
        return {"n": len(rows), "correct": sum(score.correct for _, score in rows)}
