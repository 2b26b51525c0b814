"""Recorded replies (``--model replay/FILE.jsonl``): reading and checking a predictions file.

Researchers often generate predictions elsewhere (vLLM offline batches, a provider's batch
API, a training loop) and want them graded and analysed like a live model's. A replay file
holds one JSON object per line:

    {"id": "<task id>", "response": "<the model's reply, as it wrote it>"}

EvalPlus-style lines (``{"task_id": ..., "completion": ...}``) are accepted too; a
``null`` response is a recorded empty reply. Lines are read by the answer files' own parser
(:mod:`execbench.dataset.answers`), so a replay file and an ``execbench grade`` file obey
the same rules and give the same messages. The replies are played back through Inspect
as a model (:mod:`execbench.eval.replay_model`, provider ``replay``), so grading, logs,
``inspect view`` and the report are those of a live model. Rules (checked before Inspect
starts, each a usage error naming the line):

- every line is a JSON object with an id and a response (string or null);
- an id appears once (a duplicate names both lines);
- every id is a task of the dataset (an id of another dataset means the wrong file);
- a task with no line is played back as an empty reply: scored as no answer
  (``response_status`` ``empty``: wrong in C/N, not counted in C/R) and counted in the
  run's metadata (``execbench_run.replay.missing``).

This module does not import Inspect.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from execbench.dataset.answers import parse_answer_bytes
from execbench.usererror import UserError

SHOWN = 5  # offending ids named in an error


class ReplayError(UserError):
    """A replay file that cannot be played back (unreadable, malformed, duplicate or foreign ids)."""


@dataclass(frozen=True)
class Replies:
    """The replies of one file: id → reply text, and id → its line number (1-based)."""

    path: Path
    replies: dict[str, str]
    lines: dict[str, int]
    sha256: str

    def check_ids(self, task_ids: Iterable[str]) -> list[str]:
        """The dataset's ids without a recorded reply; ReplayError if the file names an id the
        dataset does not have."""
        known = set(task_ids)
        foreign = [key for key in self.replies if key not in known]
        if foreign:
            shown = ", ".join(f"{key!r} (line {self.lines[key]})" for key in foreign[:SHOWN])
            more = f" and {len(foreign) - SHOWN} more" if len(foreign) > SHOWN else ""
            raise ReplayError(f"{self.path}: {len(foreign)} id(s) are not tasks of this dataset: {shown}{more}")
        return sorted(known - set(self.replies))


def read_replies(path: str | Path) -> Replies:
    """Read and check a replay file (module doc); ReplayError on any problem."""
    path = Path(path).expanduser()
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ReplayError(f"cannot read the replay file {path}: {exc.strerror or exc}") from None
    replies, lines = parse_answer_bytes(data, path)  # the answer files' one parser (AnswerFileError)
    if not replies:
        raise ReplayError(f"{path}: no replies (expected JSON lines {{\"id\": ..., \"response\": ...}})")
    return Replies(path=path, replies=replies, lines=lines, sha256=hashlib.sha256(data).hexdigest())
