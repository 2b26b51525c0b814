"""Completion accounting (paper 001 §4): the one place C, R and N are counted.

For a set of planned responses: ``N`` planned, ``R`` completed (a response came back and
was graded), ``C`` correct among the completed ones. ``C/R`` is the completed-response
accuracy, ``C/N`` the all-planned accuracy (a failed request, an empty response or a
response that never ran counts as wrong), ``R/N`` the completion rate. The evaluation's
Inspect metrics, ``execbench eval``'s summary and the analysis tables all count here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable


@dataclass(frozen=True)
class Accounting:
    planned: int  # N
    completed: int  # R
    correct: int  # C

    @property
    def accuracy_completed(self) -> float | None:
        """C/R (None without a completed response)."""
        return self.correct / self.completed if self.completed else None

    @property
    def accuracy_planned(self) -> float | None:
        """C/N (None when nothing was planned)."""
        return self.correct / self.planned if self.planned else None

    @property
    def completion_rate(self) -> float | None:
        """R/N."""
        return self.completed / self.planned if self.planned else None


def account(responses: Iterable[tuple[bool, bool]], planned: int | None = None) -> Accounting:
    """Count ``(completed, correct)`` pairs, one per response made. ``planned`` (default:
    the responses made) may exceed them: the rest never ran and count as not completed. A
    response counts as correct only if it completed."""
    made = completed = correct = 0
    for done, right in responses:
        made += 1
        if done:
            completed += 1
            correct += bool(right)
    return Accounting(planned=max(made, planned if planned is not None else made), completed=completed,
                      correct=correct)
