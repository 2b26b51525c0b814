"""The build engines every family shares, and the family folders (the plug-ins).

``build.py`` (the build engine), ``distributed.py`` (its Ray executor), ``grade.py`` (grading a
dataset) and ``templates.py`` sit here; each folder ``families/<name>/`` is one plug-in. The
contract they implement and the registry that finds them live one floor down, in
:mod:`execbench.contract` (``from execbench.contract import families``; ``families.get(name)``).
This package's ``__init__`` imports nothing, so loading a family folder loads no engine.
"""
