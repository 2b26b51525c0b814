"""Execution tracing: :mod:`.tracer` runs inside the sandboxed child (with :mod:`.state`,
the state family's state-size observer), :mod:`.run` makes tracing jobs for the sandbox's
job runner and checks the traces they return, :mod:`.child` is the job's handler,
:mod:`.interpreter` picks the pinned CPython 3.11 that trace answers come from,
:mod:`.script` reads a program's main guard, ``#START``/``#END`` markers and tracer
tampering."""

from execbench.tracing.run import calls_job, checked, run_traces, script_job, trace_calls, trace_script
from execbench.tracing.tracer import TraceLimits

__all__ = ["TraceLimits", "calls_job", "checked", "run_traces", "script_job", "trace_calls", "trace_script"]
