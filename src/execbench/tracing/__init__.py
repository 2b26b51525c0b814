"""Execution tracing: :mod:`.tracer` runs inside the sandboxed child (with :mod:`.state`,
the state family's state-size observer), :mod:`.run` is the parent-side API that ships a
program into the sandbox and reads the trace back, :mod:`.interpreter` picks the pinned
CPython 3.11 that trace answers come from, :mod:`.script` reads a program's main guard,
``#START``/``#END`` markers and tracer tampering."""

from execbench.tracing.run import TraceRun, trace_calls, trace_script
from execbench.tracing.tracer import TraceLimits

__all__ = ["TraceLimits", "TraceRun", "trace_calls", "trace_script"]
