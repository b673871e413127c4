"""Trace -> program: collectives expanded, blocking calls split, combine rows recorded.

* :mod:`.lower` -- :func:`~.lower.lower_trace`, a trace in memory to a program;
* :mod:`.lowered` -- what a lowering takes and gives (``LoweringOptions``, ``Lowered``);
* :mod:`.templates` -- each collective call mapped to a schedule template;
* :mod:`.kernel` -- the compiled loops that lay out and write the rows;
* :mod:`.rows` -- row bookkeeping (flattened ranges, the row plan and writer);
* :mod:`.blocks` -- a trace file lowered a block of ranks at a time into a program file;
  :mod:`.block_cuts` (its first pass: the blocks) and :mod:`.block_reads` (a block read
  and checked).

The package imports nothing: import the module you need.
"""
