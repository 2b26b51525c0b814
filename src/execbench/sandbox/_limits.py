"""The limits of one run (see the package docs, "Limits" and "Disk")."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    cpu_seconds: float = 10.0       # RLIMIT_CPU per process, rounded up to whole seconds
    wall_seconds: float = 30.0
    memory_bytes: int = 2 * 1024**3      # RLIMIT_AS
    file_size_bytes: int = 64 * 1024**2  # RLIMIT_FSIZE; also the cap for collected files
    open_files: int = 256                # RLIMIT_NOFILE
    max_tasks: int = 64                  # processes + threads, holds as root (cgroup pids)
    output_bytes: int = 4 * 1024**2      # cap for each of stdout / stderr captured
    # Everything the run writes (work dir = HOME = TMPDIR, /dev/shm, read_write_paths) is
    # on one tmpfs of its own (sandbox/_disk.py): at most this many bytes and files.
    disk_bytes: int = 1024**3
    disk_inodes: int = 65_536
