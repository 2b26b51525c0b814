"""Analyses of graded evaluation results, as the three papers publish them.

Pure functions on the per-sample table of :mod:`execbench.analysis.schema` (pandas), one
module per analysis family: ``tables`` (accuracy with Wilson intervals, trace-length
buckets), ``trace_metrics`` (CoCoNUT), ``taxonomy`` (a family's declared error taxonomy,
counted), ``correlations`` (Pearson, partial, binned accuracy), ``paired`` (short vs long,
two runs), ``logistic`` (clustered error models with separation checks), ``mann_whitney``
(theta with permutation tests), ``memorisation`` (original vs mutated), ``compare`` (two
runs of one model) and ``bootstrap`` (source-clustered intervals). Only ``logs`` reads Inspect logs.
"""
