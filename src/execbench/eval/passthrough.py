"""Extra ``execbench eval`` flags passed through to Inspect's ``eval_set``.

Any keyword of ``inspect_ai.eval_set`` or of ``GenerateConfig`` may be given as a flag, the
way Inspect's CLI spells it: ``--max-tokens 2048``, ``--reasoning-effort=high``,
``--fail-on-error 0.05``, ``--display plain``, ``--no-log-realtime``, ``--seed 7``.
``-M key=value`` (``--model-arg``) sets model arguments. Values are parsed as JSON when
they can be (``7``, ``0.5``, ``true``, ``{"k": 1}``), else taken as text, else split on
commas for list options, and checked against the type Inspect declares for the option.
"""

from __future__ import annotations

import inspect
import json
import typing
from dataclasses import dataclass, field
from typing import Any
from execbench.usererror import UserError

# Options execbench sets from its own flags (or must own): passing them through is an error.
RESERVED = {
    "tasks": "the dataset argument",
    "model": "--model",
    "log_dir": "--log-dir",
    "limit": "--limit",
    "epochs": "--epochs",
    "max_connections": "--max-connections",
    "task_args": "--variant/--mode/--no-cache",
    "solver": "--mode",
}
_TRUTHY = {"true": True, "yes": True, "1": True, "on": True, "false": False, "no": False, "0": False, "off": False}


class PassthroughError(UserError):
    """An extra flag is not an Inspect option, or its value does not fit the option."""


@dataclass
class InspectOptions:
    eval_set: dict[str, Any] = field(default_factory=dict)  # eval_set() keywords
    generate: dict[str, Any] = field(default_factory=dict)  # GenerateConfig fields
    model_args: dict[str, Any] = field(default_factory=dict)

    def as_kwargs(self) -> dict[str, Any]:
        kwargs = {**self.eval_set, **self.generate}
        if self.model_args:
            kwargs["model_args"] = {**kwargs.get("model_args", {}), **self.model_args}
        return kwargs


def _annotations() -> tuple[dict[str, Any], dict[str, Any]]:
    from inspect_ai import eval_set
    from inspect_ai.model import GenerateConfig

    hints = typing.get_type_hints(eval_set)
    params = {name: hints.get(name, Any) for name, p in inspect.signature(eval_set).parameters.items()
              if p.kind is not inspect.Parameter.VAR_KEYWORD}
    generate = {name: info.annotation for name, info in GenerateConfig.model_fields.items()}
    return params, generate


def _is_flag(annotation: Any) -> bool:
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    return annotation is bool or (bool(args) and all(a is bool for a in args))


def _accepts_bool(annotation: Any) -> bool:
    return annotation is bool or bool in typing.get_args(annotation) or annotation is Any


def _coerce(name: str, raw: str, annotation: Any) -> Any:
    from pydantic import TypeAdapter, ValidationError

    adapter = TypeAdapter(annotation)
    candidates: list[Any] = []
    try:
        candidates.append(json.loads(raw))
    except ValueError:
        pass
    candidates.append(raw)
    if "," in raw:
        candidates.append([part.strip() for part in raw.split(",") if part.strip()])
    candidates.append([raw])  # a one-element list option
    problem = ""
    for candidate in candidates:
        try:
            return adapter.validate_python(candidate)
        except ValidationError as exc:
            problem = exc.errors()[0].get("msg", str(exc)) if exc.errors() else str(exc)
    raise PassthroughError(f"--{name.replace('_', '-')} {raw!r}: {problem}")


def _key_value(flag: str, raw: str) -> tuple[str, Any]:
    key, sep, value = raw.partition("=")
    if not sep or not key.strip():
        raise PassthroughError(f"{flag} expects KEY=VALUE, got {raw!r}")
    try:
        return key.strip(), json.loads(value)
    except ValueError:
        return key.strip(), value


def parse(args: list[str]) -> InspectOptions:
    """Turn extra command-line tokens into Inspect keyword arguments (PassthroughError if not)."""
    params, generate = _annotations()
    options = InspectOptions()
    i = 0
    while i < len(args):
        token = args[i]
        i += 1
        if token in ("-M", "--model-arg"):
            if i >= len(args):
                raise PassthroughError(f"{token} expects KEY=VALUE")
            key, value = _key_value(token, args[i])
            options.model_args[key] = value
            i += 1
            continue
        if token in ("-T", "--task-arg"):
            raise PassthroughError(f"{token}: task arguments are set by execbench ({RESERVED['task_args']})")
        if not token.startswith("--") or token == "--":
            raise PassthroughError(f"unexpected argument {token!r} (Inspect options look like --name VALUE)")
        name, has_value, value = token[2:].partition("=")
        key = name.replace("-", "_")
        negated = False
        if key not in params and key not in generate and key.startswith("no_"):
            negated, key = True, key[3:]
        if key in RESERVED:
            raise PassthroughError(f"--{name}: use execbench's {RESERVED[key]} instead")
        if key in generate:
            annotation, target = generate[key], options.generate
        elif key in params:
            annotation, target = params[key], options.eval_set
        else:
            raise PassthroughError(f"--{name} is not an Inspect eval-set or generation option")
        if negated:
            if has_value or not _accepts_bool(annotation):
                raise PassthroughError(f"--{name}: only boolean options can be negated")
            target[key] = False
            continue
        if not has_value:
            if _is_flag(annotation):
                if i < len(args) and args[i].lower() in _TRUTHY:
                    value, i = args[i], i + 1
                else:
                    target[key] = True
                    continue
            elif i < len(args) and not args[i].startswith("--"):
                value, i = args[i], i + 1
            elif _accepts_bool(annotation):
                target[key] = True
                continue
            else:
                raise PassthroughError(f"--{name} needs a value")
        if key == "model_args":
            raise PassthroughError("--model-args: use -M KEY=VALUE")
        target[key] = _coerce(key, value, annotation)
    return options
