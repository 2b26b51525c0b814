"""The error a source raises: a source specification could not be read."""

from __future__ import annotations

from execbench.usererror import UserError


class SourceError(UserError):
    """A source specification could not be read (bad path, malformed case.toml, ...)."""
