"""The build cache: finished candidate outcomes in sqlite, keyed by content hash.

A key hashes everything an outcome depends on (family, builder version, the candidate's
content, build settings, Python version), so an unchanged rebuild reads every outcome
back instead of re-running it, and a crashed build loses nothing it had finished.
Location: ``$EXECBENCH_CACHE_DIR`` or ``$XDG_CACHE_HOME/execbench`` (default ``~/.cache/execbench``).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any


def cache_dir() -> Path:
    explicit = os.environ.get("EXECBENCH_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "execbench"


def content_key(*parts: Any) -> str:
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


class BuildCache:
    """A small thread-safe key → JSON store; ``enabled=False`` makes every lookup miss."""

    def __init__(self, path: str | Path | None = None, *, enabled: bool = True) -> None:
        self.enabled = enabled
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        if enabled:
            path = Path(path) if path else cache_dir() / "build-cache.sqlite"
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, check_same_thread=False, timeout=30)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS outcome (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            self._db.commit()

    def get(self, key: str) -> Any | None:
        if self._db is None:
            self.misses += 1
            return None
        with self._lock:
            row = self._db.execute("SELECT value FROM outcome WHERE key = ?", (key,)).fetchone()
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        return json.loads(row[0])

    def put(self, key: str, value: Any) -> None:
        if self._db is None:
            return
        blob = json.dumps(value, sort_keys=True, ensure_ascii=False)
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO outcome (key, value) VALUES (?, ?)", (key, blob))
            self._db.commit()

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
