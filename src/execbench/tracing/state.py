"""The program state a line event can see, and its size: ``peak_state`` and ``state_load``
of the checkpoint-state family (paper 001, section 5). Runs inside the sandboxed child, as
an observer of :class:`execbench.tracing.tracer.Tracer` (``observer=StateMeter(files)``):
``peak_state`` = max_t |S_t| and ``state_load`` = L = sum_t |S_t|, where S_t is the state
reachable from the program's own variables at line event t.

Size convention (|S_t|, "slots"):

* roots: the local variables of every active frame whose code is in the program files
  (innermost first), then the program module's globals; names that are dunders, start
  with the caller's ``hidden_prefix`` (instrumentation; the state family's ``_checkpoint``),
  or are bound to modules, functions, classes or builtins are not state;
* each root binding contributes the size of its value: an atomic value (None, bool, int,
  float, complex, str, bytes, range) is 1 whatever its length; a container (list, tuple,
  dict, set, frozenset, collections.deque) is 1 plus the size of each element (for dicts:
  each key and each value); an instance of a Python class is 1 plus the size of each value
  in its instance ``__dict__`` (read without calling user code); anything else (iterators,
  generators, files, C-level objects) is 1;
* frames of instrumentation helpers are not followed (the tracer's ``skip_prefix``, the
  same prefix): their opcodes, lines and locals do not count;
* a container or instance is counted once per observation (by identity): a second
  reference to it adds 0, so aliases and cycles are not double counted.

Cost control: a walk costs about |S_t| steps, so a long run with a large state would cost
sum_t |S_t| steps. The walker has a work budget; each time the work done passes the next
multiple of the budget, the sampling stride doubles (observe every 2nd, 4th, ... line
event), and ``state_load`` is then the stride-weighted sum of the sampled sizes. The final
stride is reported (``state_stride``: 1 means every line event was measured exactly).
"""

from __future__ import annotations

import types
from collections import deque
from typing import Any

_ATOMIC = frozenset({type(None), bool, int, float, complex, str, bytes, range})
_SEQUENCES = frozenset({list, tuple, set, frozenset, deque})
_NOT_STATE = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
              type, types.BuiltinMethodType)
_get_dict = object.__getattribute__


def _is_state_name(name: str, value: Any, hidden: str | None) -> bool:
    if name.startswith("__") and name.endswith("__"):
        return False
    if hidden is not None and name.startswith(hidden):
        return False
    return not isinstance(value, _NOT_STATE)


class _Walker:
    """Counts slots of values, deduplicating containers by identity within one walk."""

    __slots__ = ("seen", "work")

    def __init__(self) -> None:
        self.seen: set[int] = set()
        self.work = 0

    def size(self, value: Any) -> int:
        t = type(value)
        if t in _ATOMIC:
            return 1
        key = id(value)
        if key in self.seen:
            return 0
        self.seen.add(key)
        if t in _SEQUENCES:
            n = len(value)
            self.work += n + 1
            if n and set(map(type, value)) <= _ATOMIC:
                return 1 + n
            return 1 + sum(map(self.size, value))
        if t is dict:
            n = len(value)
            self.work += 2 * n + 1
            if n and set(map(type, value)) <= _ATOMIC and set(map(type, value.values())) <= _ATOMIC:
                return 1 + 2 * n
            return 1 + sum(map(self.size, value)) + sum(map(self.size, value.values()))
        self.work += 1
        if isinstance(value, _NOT_STATE) or not hasattr(t, "__dict__") or t.__module__ == "builtins":
            return 1
        try:
            attrs = _get_dict(value, "__dict__")
        except Exception:  # noqa: BLE001 - no instance dict (slots, C types)
            return 1
        if type(attrs) is not dict:
            return 1
        self.work += len(attrs)
        return 1 + sum(self.size(v) for v in attrs.values())


def state_size(frame: types.FrameType, files: frozenset[str], hidden: str | None = None) -> tuple[int, int]:
    """(|S|, work) for the program state visible from ``frame`` (see the module docstring);
    names starting with ``hidden`` (instrumentation) are not state."""
    walker = _Walker()
    total = 0
    module_globals = None
    f: types.FrameType | None = frame
    while f is not None:
        code = f.f_code
        if code.co_filename in files:
            if module_globals is None and f.f_globals.get("__name__") == "__main__":
                module_globals = f.f_globals
            if code.co_name != "<module>":
                for name, value in f.f_locals.items():
                    if _is_state_name(name, value, hidden):
                        total += walker.size(value)
        f = f.f_back
    if module_globals is None:
        module_globals = frame.f_globals
    for name, value in list(module_globals.items()):
        if _is_state_name(name, value, hidden):
            total += walker.size(value)
    return total, walker.work + 1


class StateMeter:
    """Line-event observer that measures |S_t| (with the stride sampling above)."""

    def __init__(self, files: list[str], *, budget: int = 300_000, hidden_prefix: str | None = None) -> None:
        self.files = frozenset(files)
        self.hidden = hidden_prefix  # names of the instrumentation, not of the program
        self.budget = max(1, budget)
        self.events = 0
        self.peak_state = 0
        self.state_load = 0
        self.stride = 1
        self.samples = 0
        self.work = 0
        self._next_budget = self.budget

    def __call__(self, frame: types.FrameType) -> None:
        self.events += 1
        if self.events % self.stride:
            return
        size, work = state_size(frame, self.files, self.hidden)
        self.samples += 1
        self.work += work
        self.state_load += size * self.stride
        if size > self.peak_state:
            self.peak_state = size
        while self.work > self._next_budget:
            self.stride *= 2
            self._next_budget += self.budget

    def result(self) -> dict[str, Any]:
        return {"peak_state": self.peak_state, "state_load": self.state_load, "state_stride": self.stride,
                "state_samples": self.samples, "state_work": self.work}
