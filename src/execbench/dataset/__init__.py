"""Dataset records, dataset directories and the build cache."""

from execbench.dataset.record import (ANSWER_KINDS, DatasetError, Task, TaskId, make_id, parse_id,
                                      register_family_check, validate)
from execbench.dataset.store import DatasetWriter, read_manifest, read_rejected, read_tasks

__all__ = [
    "ANSWER_KINDS", "DatasetError", "DatasetWriter", "Task", "TaskId", "make_id", "parse_id",
    "read_manifest", "read_rejected", "read_tasks", "register_family_check", "validate",
]
