"""Selection and masking: the assertions of a test module and rewrites of its text, which operand
is masked (the DVP's funnel 2 forms), and the cap on tasks per test function. The lowest room:
it imports no other.
"""
