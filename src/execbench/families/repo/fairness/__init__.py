"""Context and leaks (the fairness gates): the test-side definitions a prompt must carry, what the
test touched at run time, what the prompt hides beside the masked operand, the leak gate and its
static evaluator, the agent's masked copies, and the difficulty gate.
"""
