"""Where programs come from: HumanEval, shipped corpora, and directories of case directories."""
