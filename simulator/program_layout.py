"""Layout of :attr:`mpiuq.simulator.program.Program.ops`, the engine's operation table.

One int32 row of ``OPS_WIDTH`` columns per operation: 32 bytes, two rows per cache
line, everything the event loop reads of an operation except its message size and
compute seconds (separate arrays). Shared by the program, the lowering and the
compiled loops.
"""

from __future__ import annotations

COL_KIND = 0  #: operation code (program.Op)
COL_PEER = 1  #: partner world rank, or ANY_SOURCE
COL_TAG = 2  #: message tag, or ANY_TAG
COL_COMM = 3  #: communicator (matching context)
COL_REQ = 4  #: request id, wait-list offset (WAITALL) or mark id (MARK)
COL_COUNT = 5  #: number of requests of a WAITALL
COL_CALL = 6  #: index into Program.call_names
OPS_WIDTH = 8  #: columns per row; the last is padding
TABLE_COLUMNS = ("kind", "peer", "tag", "comm", "req", "count", "call")
