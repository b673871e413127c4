"""The lowered program: what the kernel runs, in memory, on disk and cached.

* :mod:`.table` -- :class:`~.table.Program` (the operation table) and its builder;
* :mod:`.check` -- the compiled validation of a program;
* :mod:`.file` -- the program file (``NAME.mpiuqprog/``), its writer and a reader of row
  slices;
* :mod:`.source` -- where a program's rows come from (memory or a program file);
* :mod:`.cache` -- the lowered-program cache beside a trace's cache entry.

The package imports nothing: import the module you need.
"""
