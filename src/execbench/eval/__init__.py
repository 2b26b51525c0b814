"""Evaluation: Inspect AI tasks, solver, scorer and metrics; the offline local model server.

Modules (only ``tasks``, ``_registry``, ``run`` and ``passthrough`` import Inspect, and only
when they are imported themselves; ``execbench --help`` imports none of them):

- ``protocol``: prompt variants, sample metadata, response grading and completion accounting
- ``models``: model names (``local``, ``local/PATH.gguf``, Inspect providers), ``execbench models``
- ``server``: the in-process llama.cpp server for local GGUF models
- ``tasks``: the Inspect task, solver, scorer and metrics
- ``_registry``: the ``inspect_ai`` entry point (``inspect eval execbench/<family>``)
- ``passthrough``: extra Inspect flags of ``execbench eval``
- ``run``: ``execbench eval``; ``demo``: ``execbench demo``; ``summary``: C/R and C/N tables
"""
