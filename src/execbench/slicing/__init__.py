"""Interprocedural dynamic backward slicing of a traced unit test, and ESV / MCL / DFI.

This implements appendix F of the RepoReason paper on execbench's call records
(``execbench.tracing``: ``{id, parent, func, file, firstlineno, depth, lines, ...}``, the
test function at depth 0, calls recorded to depth 3). ``docs/slicing.md`` has the full
account and where it departs from the paper.

The slice
    A LIFO worklist of ``(call id, context)``. It starts with the frame that executed the
    assertion line, context ``assert_vars``: the criterion is the assertion statement,
    reading every name in it except those inside the masked expression (they are the
    answer). A callee is processed with context ``__return__``: the criterion is its
    executed ``return``/``yield`` statements, ``raise`` statements, and statements that
    modify its parameters' objects or declared globals in place (whole body for class
    bodies and modules; the whole expression for lambdas and comprehensions). Each
    ``(call, context)`` is processed once.

    Within a frame the slice is a dynamic backward slice at statement granularity over the
    frame's executed lines (:func:`execbench.slicing.slicer._slice_frame`): def/use sets
    per statement come from gast + beniget (use-def chains decide which names are locals
    of the frame, builtins, or external: globals, imports, free variables), control
    dependences from the statement structure plus early exits, and the executed order
    picks the definition that reached each use.

    Every child call record attached to a relevant statement (see ``_attach``: exact with
    a ``call_line`` in the record, else aligned by callee name and call order) is pushed
    with context ``__return__``; an explicit call site on a relevant statement with no
    child record is reported in ``untraced_calls`` (builtins, C code, stdlib, calls past
    the depth limit).

The evidence and the metrics
    ``relevant_calls``  the processed call ids (F_rel as calls);
    ``relevant_lines``  ``{file: sorted line numbers}``, the executed lines that belong to
                        relevant statements of relevant calls;
    ``source_variables``  S, below.

    ESV = number of distinct ``(file, line)`` code lines (not blank, not comment-only;
          docstring lines count) in the source spans of the relevant calls' functions
          (decorators to last line). A function counts once however often it ran; a
          nested function inside a relevant function is part of its span.
    MCL = sum over relevant calls, over the relevant lines of that call, of the number of
          times the line executed in that call (the same line in two calls counts twice).
    DFI = |S|, S = union over relevant calls of the names read by the call's relevant
          statements and (re)defined by none of them, minus builtins, Python keywords,
          names bound by ``import x`` in the module or by any import inside the function,
          and names the relevant statements call (``f(...)``).
"""

from execbench.slicing.analysis import AnalysisCache
from execbench.slicing.slicer import (CallRecord, SliceCriterion, SliceError, SliceResult, UntracedCall,
                                      slice_metrics)

__all__ = ["AnalysisCache", "CallRecord", "SliceCriterion", "SliceError", "SliceResult", "UntracedCall",
           "slice_metrics"]
