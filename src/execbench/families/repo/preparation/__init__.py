"""Source preparation: which repositories and releases a build takes (package lists, release windows)
and which of a release's tests are new (new-tests-only mode). The repositories themselves are
prepared by :mod:`execbench.sources.repos`.
"""
