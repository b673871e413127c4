"""Trace -> program: collectives expanded, blocking calls split, combine rows recorded.

* :mod:`.lower` -- :func:`~.lower.lower_trace`, a trace in memory to a program;
* :mod:`.kernel` -- the lowering's compiled loops;
* :mod:`.rows` -- row bookkeeping (flattened ranges, the row plan and writer);
* :mod:`.blocks` -- a trace file lowered a block of ranks at a time into a program file.

The package imports nothing: import the module you need.
"""
