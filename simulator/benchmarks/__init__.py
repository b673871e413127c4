"""Benchmarks as small two-rank MPI programs on the engine that replays traces.

* :mod:`.kinds` -- the benchmark kinds by name (their registry; light to import);
* :mod:`.run` -- their programs run one at a time or in batches of parameter sets
  (``evaluate_batch``, ``BenchmarkModel``).

The package imports nothing: import the module you need.
"""
