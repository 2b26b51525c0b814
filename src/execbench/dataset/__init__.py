"""Dataset records, dataset directories, their manifests and content hash, and the build cache."""

from execbench.dataset.manifest import MANIFEST_VERSION, ContentHash, Manifest, content_hash
from execbench.dataset.record import DatasetError, FamilyCheck, Task, TaskId, arms_check, make_id, parse_id, validate
from execbench.dataset.store import (DatasetWriter, ModifiedDatasetError, check_output_dir, check_output_file,
                                     check_unmodified, is_dataset_dir, load_manifest, read_manifest, read_rejected,
                                     read_tasks)

__all__ = [
    "MANIFEST_VERSION", "ContentHash", "DatasetError", "DatasetWriter", "FamilyCheck", "Manifest", "ModifiedDatasetError",
    "Task", "arms_check",
    "TaskId", "check_output_dir", "check_output_file", "check_unmodified", "content_hash", "is_dataset_dir",
    "load_manifest", "make_id", "parse_id", "read_manifest", "read_rejected", "read_tasks", "validate",
]
