"""Verification: running a test module under pytest in the sandbox (the runner and the pytest
plug-in shipped into it), the answer candidates of an assertion and their checks (the DVP's
funnel 1), and admission by the verify runs.
"""
