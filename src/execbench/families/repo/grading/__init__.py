"""Grading a repo answer: literal comparison, the restricted sympy parser, and the test's own
judgement in the package's venv in the sandbox.
"""
