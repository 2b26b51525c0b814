"""Dataset records, dataset directories and the build cache."""

from execbench.dataset.record import ARMS, FAMILIES, DatasetError, Task, make_id, validate
from execbench.dataset.store import DatasetWriter, read_manifest, read_rejected, read_tasks

__all__ = [
    "ARMS", "FAMILIES", "DatasetError", "DatasetWriter", "Task", "make_id",
    "read_manifest", "read_rejected", "read_tasks", "validate",
]
