"""The plug-in contract and the family registry: the floor every user of a family stands on.

``plugin`` holds what a family provides and exchanges with the build engines (:class:`Family`,
:class:`Candidate`, :class:`Outcome`, :class:`Reject`, :class:`Prompt`, :class:`AnalysisFacts` with its :class:`Metric` and
:class:`SliceTable` declarations)
and the one build-cache key (:func:`build_key`); ``hashseeds`` a build's hash seeds;
``families`` the registry (``from execbench.contract import families``; ``families.get(name)``).
This package imports no build engine, no ``mutation/`` and no family folder: they all import it
(docs/architecture.md, "Layers").
"""

from execbench.contract import families
from execbench.contract.plugin import (AnalysisFacts, Candidate, Family, Message, Metric, Outcome, Prompt, Reject,
                                       SliceTable, SourceError, build_key)

__all__ = ["AnalysisFacts", "Candidate", "Family", "Message", "Metric", "Outcome", "Prompt", "Reject", "SliceTable", "SourceError",
           "build_key", "families"]
