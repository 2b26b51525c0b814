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
from typing import Any, Iterable

_ATOMIC = frozenset({type(None), bool, int, float, complex, str, bytes, range})
_SEQUENCES = frozenset({list, tuple, set, frozenset, deque})
_NOT_STATE = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
              type, types.BuiltinMethodType)
# exact types whose values are never _NOT_STATE (builtins: their __class__ cannot be overridden)
_PLAIN = _ATOMIC | _SEQUENCES | {dict}
_get_dict = object.__getattribute__
# True when every type of the iterable is atomic (stops at the first that is not; True when empty)
_all_atomic = _ATOMIC.issuperset


def _is_state_name(name: str, value: Any, hidden: str | None) -> bool:
    if name.startswith("__") and name.endswith("__"):
        return False
    if hidden is not None and name.startswith(hidden):
        return False
    return not isinstance(value, _NOT_STATE)


class _Walker:
    """Counts slots of values, deduplicating containers by identity within one walk.

    Speed (the walk is most of a measured run's cost): containers whose elements are all
    atomic are sized without visiting the elements one by one, and :meth:`children` sizes
    atomic, already-seen and all-atomic children in its own loop, calling :meth:`size` only
    for the rest. The sizes and the work are those of the plain recursion (each distinct
    container adds its own 1 + atomic elements and its own work, whichever reference
    reaches it first), so ``state_load`` and the stride do not depend on these shortcuts."""

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
            self.work += len(value) + 1
            if _all_atomic(map(type, value)):
                return 1 + len(value)
            return 1 + self.children(value)
        if t is dict:
            n = len(value)
            self.work += 2 * n + 1
            if _all_atomic(map(type, value)):
                if _all_atomic(map(type, value.values())):
                    return 1 + 2 * n
                return 1 + n + self.children(value.values())
            return 1 + self.children(value) + self.children(value.values())
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
        return 1 + self.children(attrs.values())

    def children(self, values: Iterable[Any]) -> int:
        """The summed size of ``values`` (as ``sum(map(self.size, values))``)."""
        total = 0
        seen = self.seen
        for value in values:
            t = type(value)
            if t in _ATOMIC:
                total += 1
            elif id(value) in seen:
                continue
            elif t is dict and _all_atomic(map(type, value)) and _all_atomic(map(type, value.values())):
                seen.add(id(value))
                n = len(value)
                self.work += 2 * n + 1
                total += 1 + 2 * n
            elif t in _SEQUENCES and _all_atomic(map(type, value)):
                seen.add(id(value))
                n = len(value)
                self.work += n + 1
                total += 1 + n
            else:
                total += self.size(value)
        return total


def _state_values(namespace: dict[str, Any], hidden: str | None, names: dict[str, bool]) -> list[Any]:
    """The values of ``namespace``'s state bindings (:func:`_is_state_name`); ``names``
    caches the name half of that test (it depends on the name only)."""
    out = []
    for name, value in namespace.items():
        state_name = names.get(name)
        if state_name is None:
            state_name = names[name] = _is_state_name(name, None, hidden)
        if state_name and (type(value) in _PLAIN or not isinstance(value, _NOT_STATE)):
            out.append(value)
    return out


def state_size(frame: types.FrameType, files: frozenset[str], hidden: str | None = None,
               names: dict[str, bool] | None = None) -> tuple[int, int]:
    """(|S|, work) for the program state visible from ``frame`` (see the module docstring);
    names starting with ``hidden`` (instrumentation) are not state. ``names``: a cache of
    the name test kept across calls with the same ``hidden`` (the meter's)."""
    if names is None:
        names = {}
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
                total += walker.children(_state_values(f.f_locals, hidden, names))
        f = f.f_back
    if module_globals is None:
        module_globals = frame.f_globals
    total += walker.children(_state_values(dict(module_globals), hidden, names))
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
        self._names: dict[str, bool] = {}   # name -> whether a binding of that name can be state

    def __call__(self, frame: types.FrameType) -> None:
        self.events += 1
        if self.events % self.stride:
            return
        size, work = state_size(frame, self.files, self.hidden, self._names)
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
