"""The plug-in contract: the floor every user of a family stands on.

``plugin`` holds the core a family provides and exchanges with the build engines (:class:`Family`,
:class:`Candidate`, :class:`Outcome`, :class:`Reject`, :class:`Prompt`), the registration check
(:func:`check_plugin`) and the one build-cache key (:func:`build_key`); ``capabilities`` the optional parts a
family declares (:class:`AnalysisFacts` with its :class:`Metric`, :class:`SliceTable` and :class:`ErrorTaxonomy`
declarations, :class:`Slices`, :class:`BuildSchedule`, :class:`BatchGrading`, :class:`PaperScoring`,
:class:`Mutation`, ...);
``hashseeds`` a build's hash seeds; ``jsontypes`` the JSON value type of genuinely arbitrary JSON.
This package imports no build engine, no ``mutation/``, no family folder and no registry, not even
by name at run time: they all import it. Finding a family by name is :mod:`execbench.registry`'s,
a floor above the family folders (docs/architecture.md, "Layers").
"""

from execbench.contract.capabilities import (AgentBrowser, AnalysisFacts, Annotator, BatchGrading, BuildReport,
                                             BuildSchedule,
                                             Capability, Demo, ErrorCategory, ErrorTaxonomy, Licenses, Metric,
                                             Mutation, PaperScoring, PluginError, SliceTable, Slices,
                                             TeacherMutation)
from execbench.contract.context import BuildContext, SummaryTable
from execbench.contract.plugin import (Candidate, Family, Message, Outcome, Prompt, Reject, SourceError, build_key,
                                       check_plugin, grade_as, source_license, summarize_as)

__all__ = ["AgentBrowser", "AnalysisFacts", "Annotator", "BatchGrading", "BuildContext", "BuildReport", "BuildSchedule", "Candidate",
           "Capability", "Demo", "ErrorCategory", "ErrorTaxonomy", "Family", "Licenses", "Message", "Metric",
           "Mutation", "Outcome", "PaperScoring", "PluginError", "Prompt", "Reject", "SliceTable", "Slices",
           "SourceError", "SummaryTable", "TeacherMutation", "build_key", "check_plugin", "grade_as",
           "source_license", "summarize_as"]
