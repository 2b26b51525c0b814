"""execbench: execution-grounded code-reasoning benchmarks for language models.

Every answer key comes from running code (``execbench.sandbox`` + ``execbench.tracing``);
families (``execbench.families``) turn sources into tasks; ``execbench.grading`` scores
model answers without ever executing them; ``execbench.eval`` runs models through Inspect AI.
"""

__version__ = "0.1.0"
