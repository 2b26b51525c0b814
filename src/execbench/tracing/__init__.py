"""Execution tracing: :mod:`.tracer` runs inside the sandboxed child (with :mod:`.state`,
the state family's state-size observer), :mod:`.run` is the parent-side API that ships a
program into the sandbox and reads the trace back."""

from execbench.tracing.run import TraceRun, trace_calls, trace_script
from execbench.tracing.tracer import TraceLimits

__all__ = ["TraceLimits", "TraceRun", "trace_calls", "trace_script"]
