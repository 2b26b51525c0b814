"""Mutation of repo tasks: the EDME teacher pipeline, its records, and the offline adapter.
"""
