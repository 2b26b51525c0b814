"""Records: the typed records passed between the build's steps, the records of a test process
(what the plug-in writes and the runner reads), the stored traces and the slicing metrics.
"""
