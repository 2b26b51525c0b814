"""A family's build options as a user sets them (``execbench build --set KEY=VALUE``), checked
against what the family declares (``Family.default_options``): the key (an unknown one is
named with the closest declared one), the value's type (the default's: text, integer, number,
true/false) and its range (an option whose default is not negative takes no negative value; an
integer whose default is positive, a count or a limit, is at least 1).
A family's own rules on values (e.g. one of a few words) are checked by the family when it
builds. Issue 34: one place for every check of an option, as ``sources/cases.py`` is for
``case.toml`` and ``dataset/answers.py`` for answer files.
"""

from __future__ import annotations

import json
import math
from typing import Any, Iterable, Mapping

from execbench.usererror import UserError, unknown


class OptionError(UserError):
    """A ``--set`` option the family does not declare, or a value it cannot take."""


_TYPE_NAMES = {str: "text", bool: "true or false", int: "an integer", float: "a number"}


def parse_value(key: str, raw: str, default: Any) -> Any:
    """``raw`` (the text after ``=``) as a value of ``default``'s type, or OptionError."""
    try:
        value = json.loads(raw)
    except (json.JSONDecodeError, RecursionError):
        value = raw
    if isinstance(default, str):
        return raw  # a text option is its text: --set check_seeds=9
    if isinstance(default, float) and type(value) is int:
        value = float(value)  # --set time_limit=2 for a number option
    if type(value) is not type(default):
        expected = _TYPE_NAMES.get(type(default), type(default).__name__)
        raise OptionError(f"--set {key}={raw}: expected {expected} (default {json.dumps(default)})")
    if isinstance(value, float) and not math.isfinite(value):
        raise OptionError(f"--set {key}={raw}: expected a finite number")
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0 <= default:
        raise OptionError(f"--set {key}={raw}: must not be negative (default {json.dumps(default)})")
    if type(value) is int and value < 1 <= default:  # a count or limit: repeats, max_*, timeouts
        raise OptionError(f"--set {key}={raw}: must be at least 1 (default {json.dumps(default)})")
    return value


def parse_settings(pairs: Iterable[str], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """``defaults`` with every ``KEY=VALUE`` of ``pairs`` applied (``-`` in a key reads as ``_``)."""
    options = dict(defaults)
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep:
            raise OptionError(f"--set {pair!r}: expected KEY=VALUE")
        if key not in defaults:
            raise OptionError(f"--set {pair!r}: " + unknown("option", key, defaults))
        options[key] = parse_value(key, raw, defaults[key])
    return options
