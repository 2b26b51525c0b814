"""Verification: running a test module under pytest in the sandbox (the runner, the pytest
plug-in shipped into the sandbox and the records it writes back) and admitting an assertion by
its verify runs.
"""
