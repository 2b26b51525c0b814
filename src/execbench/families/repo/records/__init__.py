"""Records: the typed records passed between the build's steps, the stored traces, the slicing
metrics, and the task record of an admitted assertion.
"""
