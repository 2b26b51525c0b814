"""The plug-in contract: the floor every user of a family stands on.

``plugin`` holds what a family provides and exchanges with the build engines (:class:`Family`,
:class:`Candidate`, :class:`Outcome`, :class:`Reject`, :class:`Prompt`, :class:`AnalysisFacts` with its
:class:`Metric`, :class:`SliceTable` and :class:`ErrorTaxonomy` declarations) and the one build-cache key
(:func:`build_key`);
``hashseeds`` a build's hash seeds; ``jsontypes`` the JSON value type of genuinely arbitrary JSON.
This package imports no build engine, no ``mutation/``, no family folder and no registry, not even
by name at run time: they all import it. Finding a family by name is :mod:`execbench.registry`'s,
a floor above the family folders (docs/architecture.md, "Layers").
"""

from execbench.contract.context import BuildContext, SummaryTable
from execbench.contract.plugin import (AnalysisFacts, Candidate, ErrorCategory, ErrorTaxonomy, Family, Message,
                                       Metric, Outcome, Prompt, Reject, SliceTable, SourceError, build_key)

__all__ = ["AnalysisFacts", "BuildContext", "Candidate", "ErrorCategory", "ErrorTaxonomy", "Family", "Message", "Metric", "Outcome",
           "Prompt", "Reject", "SliceTable", "SourceError", "SummaryTable", "build_key"]
