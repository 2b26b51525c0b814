"""The build engines every family shares, and the family folders (the plug-ins).

``build.py`` (the build engine), ``distributed.py`` (its Ray executor), ``grade.py`` (grading a
dataset) and ``templates.py`` sit here; each folder ``families/<name>/`` is one plug-in. The
contract they implement lives one floor down, in :mod:`execbench.contract`; the registry that
finds them by name, :mod:`execbench.registry`, one floor above the family folders: the engines
here are handed plug-ins by their callers and look none up by name (issue 25: no runtime cycle).
This package's ``__init__`` imports nothing, so loading a family folder loads no engine.
"""
