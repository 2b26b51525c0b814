"""Selection and masking: the assertions of a test module, which operand is masked and which
answers may stand for it (the DVP's funnels), what else the prompt hides, and the cap on tasks
per test function.
"""
