"""Progress bars that also work in logs.

On a terminal :class:`LoggedProgress` is rich's ``Progress``. On anything else (a file,
a CI log, ``nohup``) rich draws only the final state, so a long build would say nothing
for many minutes: there it also prints one plain line per bar whenever another tenth of
the work is done or ``every`` seconds have passed (checked at each update, i.e. as each
unit of work finishes), and when a bar completes.
"""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console
from rich.progress import Progress, TaskID
from rich.text import Text


class LoggedProgress(Progress):
    def __init__(self, *columns: Any, console: Console, every: float = 30.0, **kwargs: Any) -> None:
        super().__init__(*columns, console=console, **kwargs)
        self.plain = not console.is_terminal
        self.every = every
        self._logged: dict[TaskID, tuple[float, int]] = {}  # bar -> (time, tenths done) of the last line

    def update(self, task_id: TaskID, **kwargs: Any) -> None:  # rich's update takes named options; we only pass them on
        super().update(task_id, **kwargs)
        if self.plain:
            self._log(task_id)

    def _log(self, task_id: TaskID) -> None:
        task = next(t for t in self.tasks if t.id == task_id)
        if not task.total:
            return
        now = time.monotonic()
        tenths = int(10 * task.completed / task.total)
        last_time, last_tenths = self._logged.get(task_id, (task.start_time or now, 0))
        if tenths == last_tenths and now - last_time < self.every and task.completed < task.total:
            return
        if task.completed >= task.total and last_tenths == 10:
            return  # the completion line is out already
        self._logged[task_id] = (now, 10 if task.completed >= task.total else tenths)
        fields = ", ".join(f"{key} {value}" for key, value in task.fields.items())
        elapsed = task.elapsed or 0.0
        line = f"{Text.from_markup(task.description).plain}: {task.completed:g}/{task.total:g}"
        self.console.print(line + (f" ({fields})" if fields else "") + f", {elapsed:.0f} s",
                           markup=False, highlight=False)
