"""Model access, below everything that uses a model (families, mutation, eval).

- :mod:`execbench.models.names`: model names (``local``, ``local/PATH.gguf``, any Inspect
  provider) and what ``execbench models`` lists.
- :mod:`execbench.models.server`: the in-process llama.cpp server for the local models.
- :mod:`execbench.models.teacher`: a chat client for one-off generations (mutation
  teachers, difficulty annotators) through Inspect AI's model API.

Nothing here imports Inspect AI or llama.cpp at module load.
"""
