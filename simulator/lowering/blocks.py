"""Lowering of a trace file in blocks of ranks, straight into a program file.

:func:`lower_trace_blocks` reads the columns of an mpiuq HDF5 trace file
(:func:`~mpiuq.simulator.trace.cache.store.save_trace`, ``mpiuq trace synth``) one block
of consecutive ranks at a time, lowers each block with the machinery of
:func:`~mpiuq.simulator.lowering.lower.lower_trace` and appends its rows to a
:mod:`program file <mpiuq.simulator.program.file>`. The file holds exactly what
``lower_trace`` of the whole trace returns (the same rows, values, wait list, row
map, request count, combine rows and collective counts, byte for byte).

Why this is exact: the lowering numbers everything in trace order, and a trace's
operations are stored rank after rank. Fresh requests (of blocking calls and
collective rounds) follow the trace's requests in that order, so a block's first
fresh request is the count of the blocks before it. The wait list holds first the
entries the user wait-alls keep (in trace order), then the fresh entries: a cheap
first pass over the ``kind``, ``nonblocking``, ``count`` (and, when the trace has
nonblocking collectives, ``request`` and ``wait_reqs``) columns finds how many user
entries each block keeps, so each block knows where both its parts start. Each block
is lowered with its wait-list entries numbered from 0 (user entries first), checked
(:meth:`Program.validate` on the block), then its wait-all rows are moved to their
global offsets.

Blocks are cut by trace operations and by the estimated rows of collectives whose
schedules grow with the communicator (an all-to-all-v with distinct counts lowers to
about ``2 p`` rows per rank from one trace operation), so a block's rows stay bounded
on such traces too; templates kept from block to block are let go past
:data:`TEMPLATE_CACHE_BYTES`.

Memory: one block of trace columns and one block of program rows, plus arrays of
``n_ranks`` entries, 1 byte and 2 bits per trace request (whether a nonblocking
collective posts it; whether it is posted, completed: the trace's request checks
across blocks) and, while a block is checked, :meth:`Program.validate`'s 4 bytes per
program request; independent of the number of operations otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from mpiuq.simulator.codes import COL_KIND, COL_REQ, OP_WAITALL, OP_WAITANY
from mpiuq.simulator.collectives import CollectiveError
from mpiuq.simulator.errors import ProgramError
from mpiuq.simulator.lowering.block_cuts import (
    DEFAULT_BLOCK_OPS,
    MIN_BLOCK_OPS,
    MIN_BLOCKS,
    WIDE_BLOCK_ROWS,
    even_blocks,
    file_error,
    ranks_in_block,
    scan,
    weighted_blocks,
)
from mpiuq.simulator.lowering.block_reads import BlockRequests, read_block, validate_block
from mpiuq.simulator.lowering.lower import check_replayable, collector_paused
from mpiuq.simulator.lowering.lowered import (
    COLL_COMM_BASE,
    LoweringOptions,
    UnreplayableTraceError,
)
from mpiuq.simulator.lowering.rows import (
    combine_rows,
    plan_layout,
    template_lengths,
    user_wait_lists,
    write_rows,
)
from mpiuq.simulator.lowering.templates import COLLECTIVE_NAMES, expand_collectives
from mpiuq.simulator.program.file import ProgramFileWriter, TraceFacts
from mpiuq.simulator.program.table import Program
from mpiuq.simulator.trace.cache.h5_reader import TraceHeader, open_trace_h5, read_column
from mpiuq.simulator.trace.ir import OpKind, Trace

#: The block lowering, and the block sizes it cuts by (defined in :mod:`.block_cuts`).
__all__ = [
    "DEFAULT_BLOCK_OPS",
    "MIN_BLOCKS",
    "MIN_BLOCK_OPS",
    "TEMPLATE_CACHE_BYTES",
    "WIDE_BLOCK_ROWS",
    "BlockLowering",
    "lower_trace_blocks",
]

IntArray = npt.NDArray[np.int64]
_INT32_MAX = int(np.iinfo(np.int32).max)

#: Bytes of collective templates one lowering keeps from block to block (templates of
#: sub-communicators recur in later blocks); beyond it the kept ones are let go. A
#: 2,048-rank all-to-all-v with distinct counts has one 200 kB template per rank: kept
#: whole, they were 0.45 GB.
TEMPLATE_CACHE_BYTES = 8 * 2**20


@dataclass
class BlockLowering:
    """What :func:`lower_trace_blocks` wrote.

    Attributes
    ----------
    path
        The program file.
    n_blocks, ranks_per_block
        How the ranks were split (``ranks_per_block``: the most ranks in one block).
    n_ops, n_requests, n_wait
        Program rows, requests and wait-list entries.
    """

    path: Path
    n_blocks: int
    ranks_per_block: int
    n_ops: int
    n_requests: int
    n_wait: int
    collectives: dict[str, int] = field(default_factory=dict)


@dataclass
class _Totals:
    """Running totals carried from block to block."""

    rows: int
    requests: int
    fresh_wait: int
    user_wait: int
    collectives: dict[str, int] = field(default_factory=dict)
    algorithms: dict[str, set[str]] = field(default_factory=dict)
    reduce_rows: list[IntArray] = field(default_factory=list)
    reduce_bytes: list[npt.NDArray[np.float64]] = field(default_factory=list)
    #: collective templates built by this lowering's blocks (gone with the lowering)
    templates: dict[tuple[object, ...], Any] = field(default_factory=dict)


def _lower_block(
    block: Trace,
    b_range: tuple[int, int],
    is_nbc: npt.NDArray[np.bool_],
    n_user_wait: int,
    totals: _Totals,
    opts: LoweringOptions,
    writer: ProgramFileWriter,
    prog_rank_ptr: IntArray,
) -> None:
    """Lower one block (as :func:`lower_trace`), check it and append it to ``writer``."""
    r0, r1 = b_range
    kind = block.kind
    n = block.n_ops
    user_wl, wa_off, wa_count = user_wait_lists(block, is_nbc)  # this block's, from 0
    wa = np.flatnonzero((kind == OpKind.WAITALL) | (kind == OpKind.WAITANY))
    coll_ops = np.flatnonzero(kind >= OpKind.BARRIER)
    with collector_paused():
        expanded, used, counted = expand_collectives(block, coll_ops, opts, totals.templates)
    tmpl = expanded.templates
    n_user = user_wl.shape[0]
    plan, rows, req_end, wl_end = plan_layout(
        block, is_nbc, tmpl, expanded.tid, totals.requests, n_user
    )
    fresh = wl_end - n_user
    if max(req_end, n_user_wait + totals.fresh_wait + fresh) > _INT32_MAX:
        raise ProgramError(
            f"trace {block.source} lowers to at least {req_end} requests or "
            f"{n_user_wait + totals.fresh_wait + fresh} wait-list entries (by rank {r1 - 1}): "
            f"the engine's limit is {_INT32_MAX}"
        )
    wait_list = np.empty(wl_end, dtype=np.int64)
    wait_list[:n_user] = user_wl
    del user_wl
    coll = (expanded.tid, expanded.comm, expanded.tag, expanded.op_s, wa_off, wa_count)
    rates = (opts.compute_scale, opts.reduce_rate_Bps, COLL_COMM_BASE)
    ops, value = write_rows(block, plan, rows, coll, tmpl, rates, wait_list)
    row_ptr = plan[0]
    del plan
    # the block's program, checked with its local wait list (other ranks empty)
    local_ptr = row_ptr[block.rank_ptr]
    program = Program(
        n_ranks=block.n_ranks,
        rank_ptr=local_ptr,
        ops=ops,
        nbytes=value,
        seconds=value.view(np.float64),
        wait_list=wait_list,
        n_requests=req_end,
        n_marks=0,
        call_names=tuple(block.call_names),
    )
    program.validate()
    # wait-all rows to the global wait list: user lists after the earlier blocks' user
    # entries, fresh lists after all user entries and the earlier blocks' fresh entries
    is_wa = (ops[:, COL_KIND] == OP_WAITALL) | (ops[:, COL_KIND] == OP_WAITANY)
    user_rows = row_ptr[wa]
    is_wa[user_rows] = False
    ops[user_rows, COL_REQ] += totals.user_wait
    ops[is_wa, COL_REQ] += n_user_wait + totals.fresh_wait - n_user
    writer.append_rows(ops, value)
    writer.append_row_ptr(row_ptr[:n] + totals.rows)
    writer.write_wait_list(totals.user_wait, wait_list[:n_user])
    writer.write_wait_list(n_user_wait + totals.fresh_wait, wait_list[n_user:])
    prog_rank_ptr[r0 : r1 + 1] = local_ptr[r0 : r1 + 1] + totals.rows
    red_rows, red_bytes = combine_rows(
        row_ptr, coll_ops, expanded.tid, [t.combine for t in tmpl], template_lengths(tmpl)[0]
    )
    totals.reduce_rows.append(red_rows + totals.rows)
    totals.reduce_bytes.append(red_bytes)
    for name, c in counted.items():
        totals.collectives[name] = totals.collectives.get(name, 0) + c
    for name, algs in used.items():
        totals.algorithms.setdefault(name, set()).update(algs)
    totals.rows += rows
    totals.requests = req_end
    if _templates_bytes(totals.templates) > TEMPLATE_CACHE_BYTES:
        totals.templates.clear()
    totals.fresh_wait += fresh
    totals.user_wait += n_user


def _templates_bytes(templates: dict[tuple[object, ...], Any]) -> int:
    """Bytes the kept templates hold (their arrays and their keys' count lists)."""
    total = 0
    for key, t in templates.items():
        sizes = key[5]
        total += t.rows.nbytes + t.combine.nbytes + t.wait_list.nbytes
        total += 36 * len(getattr(sizes, "vcounts", ()))  # a tuple slot and an int each
    return total


def lower_trace_blocks(
    h5_path: str | Path,
    options: LoweringOptions | None,
    out_path: str | Path,
    ranks_per_block: int | None = None,
    on_progress: Callable[[float], None] | None = None,
) -> BlockLowering:
    """Lower the trace file ``h5_path`` block of ranks by block into the program file ``out_path``.

    The program file holds what :func:`~mpiuq.simulator.lowering.lower.lower_trace` of the
    whole trace returns, byte for byte (see the module docstring).

    Parameters
    ----------
    h5_path
        An mpiuq HDF5 trace file (:func:`~mpiuq.simulator.trace.cache.store.save_trace`).
    options
        Reduction rate, compute scale and collective algorithms (None: defaults).
    out_path
        Program file directory to write (``NAME.mpiuqprog``; replaced if present).
    ranks_per_block
        Consecutive ranks lowered together (>= 1); None: about
        :data:`DEFAULT_BLOCK_OPS` trace operations per block, fewer on traces of less
        than :data:`MIN_BLOCKS` such blocks (at least :data:`MIN_BLOCK_OPS`), and about
        :data:`WIDE_BLOCK_ROWS` rows of wide collectives.
    on_progress
        Called after each block with the fraction of trace operations lowered so far.

    Raises
    ------
    SettingError
        If ``ranks_per_block`` is not a whole number >= 1.
    TraceFormatError
        If the file is not a valid trace file (naming it, and the operation at fault).
    UnreplayableTraceError, CollectiveError, ProgramError
        As :func:`~mpiuq.simulator.lowering.lower.lower_trace`, naming the trace file.
    """
    opts = LoweringOptions() if options is None else options
    if ranks_per_block is not None:
        ranks_in_block(ranks_per_block, 1, 1)  # before the file is opened
    with open_trace_h5(h5_path) as head:
        lay = _layout(head, ranks_per_block)
        n = head.n_ops
        n_user_wait = int(lay.kept.sum())
        requests = BlockRequests.new(head.n_requests)
        totals = _Totals(rows=0, requests=head.n_requests, fresh_wait=0, user_wait=0)
        prog_rank_ptr = np.zeros(head.n_ranks + 1, dtype=np.int64)
        facts = TraceFacts(head.source, head.format, n, dict(head.unsupported), head.notes)
        with ProgramFileWriter(
            out_path, n_ranks=head.n_ranks, call_names=head.call_names, facts=facts
        ) as writer:
            for b, (r0, r1) in enumerate(lay.blocks):
                block, done_pool = read_block(
                    head, r0, r1, lay.rank_ptr, lay.comm_ptr, lay.comm_members
                )
                a = int(lay.rank_ptr[r0])
                validate_block(head, block, a, requests, done_pool)
                if b == 0:
                    block._validate_comms(partial(_raise, head))
                check_replayable(block, lay.empty, op_offset=a)
                with _named_errors(head, r0, r1, a):
                    _lower_block(
                        block,
                        (r0, r1),
                        lay.is_nbc,
                        n_user_wait,
                        totals,
                        opts,
                        writer,
                        prog_rank_ptr,
                    )
                if totals.user_wait != int(lay.kept[: b + 1].sum()):  # pragma: no cover
                    raise RuntimeError("block lowering: user wait-list counts disagree")
                del block, done_pool
                if on_progress is not None:
                    on_progress(float(lay.rank_ptr[r1]) / max(n, 1))
            requests.finish(head)
            path = _finish(writer, totals, prog_rank_ptr, n_user_wait, lay.n_nbc)
    return BlockLowering(
        path=path,
        n_blocks=len(lay.blocks),
        ranks_per_block=lay.per,
        n_ops=totals.rows,
        n_requests=totals.requests,
        n_wait=n_user_wait + totals.fresh_wait,
        collectives=dict(totals.collectives),
    )


@dataclass
class _Layout:
    """What the first pass learns of a trace file: its rank and communicator tables, the
    blocks (``per``: the most ranks in one), per trace request whether a nonblocking
    collective posts it, per block the wait-list entries its user wait-alls keep, the
    number of nonblocking collective calls, and the ranks without operations."""

    rank_ptr: IntArray
    comm_ptr: IntArray
    comm_members: npt.NDArray[np.int32]
    blocks: list[tuple[int, int]]
    per: int
    is_nbc: npt.NDArray[np.bool_]
    kept: IntArray
    n_nbc: int
    empty: npt.NDArray[np.bool_]


def _layout(head: TraceHeader, ranks_per_block: int | None) -> _Layout:
    """Read the rank and communicator tables, scan the file and cut it into blocks."""
    rank_ptr = read_column(head, "rank_ptr", 0, head.n_ranks + 1)
    n = head.n_ops
    if rank_ptr[0] != 0 or rank_ptr[-1] != n or np.any(np.diff(rank_ptr) < 0):
        raise file_error(
            head,
            f"rank_ptr must be non-decreasing from 0 to {n} with {head.n_ranks + 1} entries",
        )
    comm_ptr = read_column(head, "comm_ptr", 0, int(head.datasets["comm_ptr"].shape[0]))
    comm_members = read_column(head, "comm_members", 0, int(head.datasets["comm_members"].shape[0]))
    per = ranks_in_block(ranks_per_block, head.n_ranks, n)
    chunks = even_blocks(head.n_ranks, per)
    comm_sizes = np.diff(comm_ptr).astype(np.int64)
    is_nbc, kept_per_rank, n_nbc, wide = scan(head, chunks, rank_ptr, comm_sizes)
    blocks = chunks if ranks_per_block is not None else weighted_blocks(np.diff(rank_ptr), wide)
    if ranks_per_block is None and blocks:
        per = max(r1 - r0 for r0, r1 in blocks)
    kept = np.array([int(kept_per_rank[r0:r1].sum()) for r0, r1 in blocks], dtype=np.int64)
    empty = np.diff(rank_ptr) == 0
    return _Layout(rank_ptr, comm_ptr, comm_members, blocks, per, is_nbc, kept, n_nbc, empty)


def _raise(head: TraceHeader, msg: str, record: int | None = None) -> None:
    """The ``fail`` callback of the trace's checks: a :func:`file_error` raised."""
    raise file_error(head, msg, record)


@contextmanager
def _named_errors(head: TraceHeader, r0: int, r1: int, a: int) -> Iterator[None]:
    """Errors of lowering the block of ranks ``[r0, r1)`` (first trace operation ``a``)
    re-raised naming the trace file."""
    try:
        yield
    except ProgramError as exc:  # name the trace file, keep the rank and operation
        named = ProgramError(f"trace file {head.path}: {exc}")
        named.rank, named.op_index = exc.rank, exc.op_index
        raise named from exc
    except (CollectiveError, UnreplayableTraceError) as exc:  # block-local indices
        raise type(exc)(
            f"{exc} (trace file {head.path}, block of ranks {r0}..{r1 - 1}: its "
            f"operation indices count from trace operation {a})"
        ) from exc


def _finish(
    writer: ProgramFileWriter,
    totals: _Totals,
    prog_rank_ptr: IntArray,
    n_user_wait: int,
    n_nbc: int,
) -> Path:
    """Write the program file's last row pointer and tables; returns its path."""
    writer.append_row_ptr(np.array([totals.rows], dtype=np.int64))
    return writer.finish(
        rank_ptr=prog_rank_ptr,
        n_requests=totals.requests,
        n_wait=n_user_wait + totals.fresh_wait,
        collectives={
            k: totals.collectives[k] for k in COLLECTIVE_NAMES.values() if k in totals.collectives
        },
        algorithms={k: sorted(v) for k, v in totals.algorithms.items()},
        nonblocking_collectives=n_nbc,
        reduce_rows=np.concatenate([np.zeros(0, np.int64), *totals.reduce_rows]),
        reduce_bytes=np.concatenate([np.zeros(0), *totals.reduce_bytes]),
    )
