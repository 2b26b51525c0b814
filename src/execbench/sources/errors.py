"""The error a source raises: a source specification could not be read."""

from __future__ import annotations


class SourceError(ValueError):
    """A source specification could not be read (bad path, malformed case.toml, ...)."""
