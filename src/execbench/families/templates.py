"""Versioned prompt templates, shared by the families.

Each family keeps its jinja2 files in its own ``prompts/`` folder; every file starts with
``{# version: N #}``, and the name and version of the template that rendered a prompt go
into every log, so a changed prompt is never mistaken for the old one.
"""

from __future__ import annotations

import re
from functools import cached_property, lru_cache
from pathlib import Path

import jinja2

_VERSION = re.compile(r"\{#\s*version:\s*(\d+)\s*#\}")


class PromptTemplates:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @cached_property
    def _environment(self) -> jinja2.Environment:
        return jinja2.Environment(
            loader=jinja2.FileSystemLoader(self.directory),
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=False,
            trim_blocks=True,
            autoescape=False,
        )

    def render(self, name: str, **values: object) -> str:
        return self._environment.get_template(f"{name}.jinja").render(**values)

    def version(self, name: str) -> str:
        return _version(self.directory / f"{name}.jinja")


@lru_cache(maxsize=None)
def _version(path: Path) -> str:
    match = _VERSION.search(path.read_text(encoding="utf-8"))
    if not match:
        raise ValueError(f"prompt template {path.stem!r} ({path}) has no version header")
    return match.group(1)
