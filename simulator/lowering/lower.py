"""Lowering of a :class:`~mpiuq.simulator.trace.ir.Trace` into an engine :class:`Program`.

What each trace operation becomes (all keep the trace operation's MPI call, so
the engine's per-call accounting reports time under the application's calls):

* ``COMPUTE`` -> ``COMPUTE`` of ``seconds * compute_scale`` (zero-length gaps dropped);
* ``ISEND`` / ``IRECV`` -> the same, engine request id = trace request id;
* ``SEND`` / ``RECV`` -> ``ISEND`` / ``IRECV`` + ``WAIT`` on a fresh request;
* ``SENDRECV`` -> ``IRECV`` + ``ISEND`` + ``WAITALL`` of both;
* ``WAIT`` / ``WAITALL`` -> the same on the trace's request ids (partial wait-alls
  stay partial; requests the trace never waits for are left pending, which the
  engine allows);
* collectives -> the point-to-point algorithm of :mod:`mpiuq.simulator.collectives`
  on the collective's communicator, each round an ``IRECV``/``ISEND`` set closed by
  a ``WAITALL``, plus a ``COMPUTE`` of ``bytes / reduce_rate`` per combine step of
  reductions (or, when the trace records the operator's cost, that cost once, scaled
  by ``compute_scale``).

Collective traffic uses its own matching context, engine communicator
``COLL_COMM_BASE + trace communicator``, and the per-(rank, communicator)
collective sequence number as tag, so it never matches user point-to-point
messages, whatever their tags (``ANY_TAG``, ``ANY_SOURCE`` included).

**Nonblocking collectives** (``MPI_Iallreduce`` ...) are executed with the
blocking algorithm at the call; the ``WAIT``/``WAITALL`` entries naming their
request become no-ops (a wait-all keeps its other requests). This can only
lengthen a run, never deadlock a correct program that does not depend on
progress of the collective before its wait. Nonblocking collectives the trace
holds without sizes are not in the trace's operations at all; they are listed
in ``Trace.unsupported`` and reported by the replay.

How: array operations map each collective call to a schedule template (built in
Python once per distinct collective, rank position, communicator size, root and
sizes, and cached) and choose the requests each wait-all keeps; two compiled
passes of :mod:`mpiuq.simulator.lowering.kernel` then lay out and write every
program row.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from mpiuq.simulator.codes import (
    NO_PEER,
    TPL_BYTES,
    TPL_COUNT,
    TPL_KIND,
    TPL_PEER,
    TPL_REQ,
    TPL_WIDTH,
)
from mpiuq.simulator.collectives import (
    REDUCING,
    CollectiveError,
    CollSizes,
    default_algorithm,
    schedule,
    validate_algorithms,
)
from mpiuq.simulator.errors import ProgramError, SettingError
from mpiuq.simulator.lowering.rows import (
    combine_rows,
    plan_layout,
    template_lengths,
    user_wait_lists,
    write_rows,
)
from mpiuq.simulator.program.table import Op, Program
from mpiuq.simulator.trace.ir import UNKNOWN_PEER, OpKind, Trace

#: Engine communicator id of collective traffic = COLL_COMM_BASE + trace communicator id.
COLL_COMM_BASE = 2**20

#: OpKind of each collective -> collective name of :mod:`mpiuq.simulator.collectives`.
COLLECTIVE_NAMES: dict[int, str] = {
    int(OpKind.BARRIER): "barrier",
    int(OpKind.BCAST): "bcast",
    int(OpKind.REDUCE): "reduce",
    int(OpKind.ALLREDUCE): "allreduce",
    int(OpKind.GATHER): "gather",
    int(OpKind.GATHERV): "gatherv",
    int(OpKind.SCATTER): "scatter",
    int(OpKind.SCATTERV): "scatterv",
    int(OpKind.ALLGATHER): "allgather",
    int(OpKind.ALLGATHERV): "allgatherv",
    int(OpKind.ALLTOALL): "alltoall",
    int(OpKind.ALLTOALLV): "alltoallv",
    int(OpKind.REDUCE_SCATTER): "reduce_scatter",
    int(OpKind.SCAN): "scan",
    int(OpKind.EXSCAN): "exscan",
}
_ROOTED = frozenset({"bcast", "reduce", "gather", "gatherv", "scatter", "scatterv"})
_VCOUNTED = frozenset({"gatherv", "scatterv", "allgatherv", "alltoallv", "reduce_scatter"})

IntArray = npt.NDArray[np.int64]


class UnreplayableTraceError(SettingError):
    """The trace cannot be replayed as a whole (e.g. peers a partial trace cannot name)."""


@dataclass(frozen=True, slots=True)
class LoweringOptions:
    """How a trace is lowered.

    Parameters
    ----------
    reduce_rate_Bps
        Rate at which reductions combine received data, bytes per second (the
        replay uses the memory bandwidth ``memory_bw_GBps`` by default); ``inf``: free
        reductions (SimGrid's SMPI charges nothing for the reduction operator).
    compute_scale
        Factor applied to the trace's compute durations (the reference study used 0.1).
    algorithms
        ``{collective: algorithm}`` overriding :func:`~mpiuq.simulator.collectives.default_algorithm`.
    """

    reduce_rate_Bps: float = 10e9
    compute_scale: float = 1.0
    algorithms: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        rate = self.reduce_rate_Bps
        if not (rate > 0 and not np.isnan(rate)):
            raise SettingError(
                f"reduce_rate_Bps={rate!r} is invalid: expected a rate > 0 (inf: free reductions)"
            )
        scale = self.compute_scale
        if not (np.isfinite(scale) and scale >= 0):
            raise SettingError(f"compute_scale={scale!r} is invalid: expected a finite number >= 0")
        object.__setattr__(
            self, "algorithms", tuple(sorted(validate_algorithms(dict(self.algorithms)).items()))
        )


@dataclass(frozen=True)
class Lowered:
    """A lowered trace.

    Attributes
    ----------
    program
        The engine program (validated).
    row_ptr
        ``(trace.n_ops + 1,)``: the program rows of trace operation ``i`` are
        ``row_ptr[i]:row_ptr[i + 1]`` (see :meth:`trace_op`).
    collectives
        Number of collective calls expanded per collective name (summed over ranks).
    algorithms
        Algorithms used per collective name.
    nonblocking_collectives
        Number of nonblocking collective calls executed at the call (their waits are no-ops).
    reduce_rows, reduce_bytes
        Program rows of the reductions' combine steps and the bytes each combines: their
        ``seconds`` are ``reduce_bytes / reduce_rate_Bps``, so a replay at another
        reduction rate can rewrite them instead of lowering again.
    """

    program: Program
    row_ptr: IntArray
    collectives: dict[str, int] = field(default_factory=dict)
    algorithms: dict[str, list[str]] = field(default_factory=dict)
    nonblocking_collectives: int = 0
    reduce_rows: IntArray = field(default_factory=lambda: np.zeros(0, np.int64))
    reduce_bytes: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))

    def trace_op(self, row: int) -> int:
        """Index of the trace operation that program row ``row`` comes from."""
        return int(np.searchsorted(self.row_ptr, row, side="right")) - 1


@dataclass(frozen=True, slots=True)
class _Template:
    """A rank's collective schedule as program rows (peers are communicator ranks).

    ``rows`` columns: kind, peer (communicator rank or -2), bytes, local request index
    (or local wait-list offset of a WAITALL, -1 otherwise), WAITALL count.
    ``combine``: bytes combined by COMPUTE rows (-1: the trace's operator cost).
    """

    rows: IntArray
    combine: npt.NDArray[np.float64]
    wait_list: IntArray  # local request indices
    n_req: int


_IRECV, _ISEND, _WAITALL, _COMPUTE = int(Op.IRECV), int(Op.ISEND), int(Op.WAITALL), int(Op.COMPUTE)


#: Columns of the rows _template lists (kind, peer, bytes, request, count), in the table.
_TPL_ORDER = [TPL_KIND, TPL_PEER, TPL_BYTES, TPL_REQ, TPL_COUNT]


def _template(
    collective: str,
    algorithm: str,
    me: int,
    p: int,
    root: int,
    sizes: CollSizes,
    with_combine: bool,
) -> _Template:
    irecv, isend, waitall, compute = _IRECV, _ISEND, _WAITALL, _COMPUTE
    rows: list[int] = []  # flattened (kind, peer, bytes, request, count) rows
    combine: list[float] = []
    wl: list[int] = []
    n_req = 0
    for step in schedule(collective, algorithm, me, p, root, sizes):
        first = n_req
        for peer, nb in step.recvs:
            rows += (irecv, peer, nb, n_req, 0)
            n_req += 1
        for peer, nb in step.sends:
            rows += (isend, peer, nb, n_req, 0)
            n_req += 1
        if n_req > first:
            rows += (waitall, NO_PEER, 0, len(wl), n_req - first)
            wl.extend(range(first, n_req))
            combine.extend([0.0] * (n_req - first + 1))
        if with_combine and step.combine_bytes > 0:
            rows += (compute, NO_PEER, 0, -1, 0)
            combine.append(float(step.combine_bytes))
    if not with_combine:
        rows += (compute, NO_PEER, 0, -1, 0)  # the trace's operator cost
        combine.append(-1.0)
    return _Template(
        rows=_table(rows),
        combine=np.array(combine, dtype=np.float64),
        wait_list=np.array(wl, dtype=np.int64),
        n_req=n_req,
    )


def _table(rows: list[int]) -> IntArray:
    """The flattened rows of :func:`_template` as a table with the ``TPL_*`` columns."""
    listed = np.array(rows, dtype=np.int64).reshape(-1, len(_TPL_ORDER))
    if list(range(TPL_WIDTH)) == _TPL_ORDER:
        return listed  # the table's own column order: nothing to move
    table = np.zeros((listed.shape[0], TPL_WIDTH), dtype=np.int64)
    table[:, _TPL_ORDER] = listed
    return table


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector (it is re-enabled if it was on).

    Expanding collectives allocates many small objects that all stay reachable (the
    cached templates); a full collection in the middle scans every object of the
    process (numba's alone, 0.06-0.08 s) and frees nothing. Whether one falls there
    depended on what the process allocated before, so the lowering time of a trace
    changed with unrelated code.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _check_replayable(trace: Trace, empty: np.ndarray | None = None, op_offset: int = 0) -> None:
    """Refuse partial traces (block lowering: ``empty`` ranks of the whole trace, first op)."""
    p2p = np.isin(
        trace.kind,
        np.array([OpKind.SEND, OpKind.RECV, OpKind.ISEND, OpKind.IRECV, OpKind.SENDRECV], np.int8),
    )
    bad = p2p & ((trace.peer == UNKNOWN_PEER) | (trace.peer2 == UNKNOWN_PEER))
    if bad.any():
        first = int(np.argmax(bad))
        raise UnreplayableTraceError(
            f"trace {trace.source} cannot be replayed as a whole: {int(bad.sum())} point-to-point "
            f"operation(s) have a peer the trace cannot name (UNKNOWN_PEER; a partial trace that "
            f"records only some ranks), the first at operation {first + op_offset} "
            f"({trace.call_names[int(trace.call[first])]}); replay needs every rank's stream"
        )
    empty = np.diff(trace.rank_ptr) == 0 if empty is None else empty
    if not empty.any() or empty.all():
        return
    peers = np.concatenate([trace.peer[p2p], trace.peer2[p2p & (trace.peer2 >= 0)]])
    named = np.unique(peers[peers >= 0])
    coll_comms = np.unique(trace.comm[trace.kind >= OpKind.BARRIER])
    for c in coll_comms.tolist():
        named = np.union1d(named, trace.comm_ranks(c)[trace.comm_ranks(c) >= 0])
    silent = named[empty[named]]
    if silent.size:
        partial = [n for n in trace.notes if "partial" in n]
        hint = f" (reader: {partial[0]})" if partial else ""
        raise UnreplayableTraceError(
            f"trace {trace.source} cannot be replayed as a whole: {silent.size} rank(s) "
            f"({', '.join(map(str, silent[:8].tolist()))}{'...' if silent.size > 8 else ''}) "
            f"have no operations but are partners of messages or collectives; replay needs "
            f"every rank's stream{hint}"
        )


def lower_trace(trace: Trace, options: LoweringOptions | None = None) -> Lowered:
    """Lower ``trace`` into a validated engine program (see the module docstring).

    Parameters
    ----------
    trace
        A validated trace with every rank's stream.
    options
        Reduction rate, compute scale and collective algorithms.

    Raises
    ------
    UnreplayableTraceError
        If the trace cannot name some peers or communicator members (partial traces).
    CollectiveError
        If a collective's arguments are inconsistent (e.g. a v-collective's count list).
    """
    opts = LoweringOptions() if options is None else options
    _check_replayable(trace)
    kind = trace.kind

    # requests of nonblocking collectives: their waits become no-ops
    is_nbc = np.zeros(trace.n_requests, dtype=np.bool_)
    nbc_ops = trace.nonblocking & (kind >= OpKind.BARRIER)
    is_nbc[trace.request[nbc_ops]] = True
    user_wl, wa_off, wa_count = user_wait_lists(trace, is_nbc)

    # ---- collectives: expand with cached per-rank templates
    coll_ops = np.flatnonzero(kind >= OpKind.BARRIER)
    with _collector_paused():
        expanded, used, counted = _expand_collectives(trace, coll_ops, opts)
    tmpl = expanded.templates
    plan, total, n_requests, n_wl = plan_layout(
        trace, is_nbc, tmpl, expanded.tid, trace.n_requests, user_wl.shape[0]
    )
    if max(n_requests, n_wl) > np.iinfo(np.int32).max:  # checked before any row is written
        raise ProgramError(
            f"trace {trace.source} lowers to {n_requests} requests and {n_wl} wait-list "
            f"entries: the engine's limit is {np.iinfo(np.int32).max}"
        )
    wait_list = np.empty(n_wl, dtype=np.int64)
    wait_list[: user_wl.shape[0]] = user_wl
    del user_wl  # in the wait list now: 8 B per entry less while the rows are written
    coll = (expanded.tid, expanded.comm, expanded.tag, expanded.op_s, wa_off, wa_count)
    rates = (opts.compute_scale, opts.reduce_rate_Bps, COLL_COMM_BASE)
    ops, value = write_rows(trace, plan, total, coll, tmpl, rates, wait_list)
    row_ptr = plan[0]
    del plan  # the plan's other columns (12 B per trace operation) go first

    program = Program(
        n_ranks=trace.n_ranks,
        rank_ptr=row_ptr[trace.rank_ptr],
        ops=ops,
        nbytes=value,
        seconds=value.view(np.float64),
        wait_list=wait_list,
        n_requests=n_requests,
        n_marks=0,
        call_names=tuple(trace.call_names),
    )
    program.validate()
    reduce_rows, reduce_bytes = combine_rows(
        row_ptr, coll_ops, expanded.tid, [t.combine for t in tmpl], template_lengths(tmpl)[0]
    )
    return Lowered(
        program=program,
        row_ptr=row_ptr,
        collectives=counted,
        algorithms={k: sorted(v) for k, v in used.items()},
        nonblocking_collectives=int(nbc_ops.sum()),
        reduce_rows=reduce_rows,
        reduce_bytes=reduce_bytes,
    )


@dataclass(frozen=True, slots=True)
class _Expanded:
    """Collective calls mapped to a small set of distinct schedule templates.

    ``tid[j]`` is the template of collective ``j`` (in ``coll_ops`` order); ``comm``,
    ``tag`` and ``op_s`` are its trace communicator, matching tag and trace operator
    seconds.
    """

    templates: list[_Template]
    tid: IntArray
    comm: IntArray
    tag: IntArray
    op_s: npt.NDArray[np.float64]


def _expand_collectives(
    trace: Trace,
    coll_ops: IntArray,
    opts: LoweringOptions,
    cache: dict[tuple[object, ...], _Template] | None = None,
) -> tuple[_Expanded, dict[str, set[str]], dict[str, int]]:
    """Template, tag, communicator and operator seconds of each collective call.

    Vectorised over calls: each rank's position in the communicator, the root's
    position and the per-(rank, communicator) sequence tags come from array
    operations; schedules are built once per distinct (collective, rank position,
    communicator size, root, sizes) key. ``cache``: templates already built by this
    lowering (its earlier blocks), keyed as they are built; it belongs to one lowering
    and goes with it (a process-wide cache keyed by v-collective count lists grew
    without bound: 1.5 GB after one 2,048-rank alltoallv).
    """
    cache = {} if cache is None else cache
    chosen = dict(opts.algorithms)
    n_coll = coll_ops.shape[0]
    rank_of = trace.rank_of_op()
    kinds = trace.kind[coll_ops].astype(np.int64)
    ranks = rank_of[coll_ops].astype(np.int64)
    comms = trace.comm[coll_ops].astype(np.int64)
    peers = trace.peer[coll_ops].astype(np.int64)
    me = np.full(n_coll, -1, dtype=np.int64)
    root = np.zeros(n_coll, dtype=np.int64)
    size = np.zeros(n_coll, dtype=np.int64)
    rooted = np.isin(kinds, [k for k, v in COLLECTIVE_NAMES.items() if v in _ROOTED])
    for c in np.unique(comms).tolist():
        sel = np.flatnonzero(comms == c)
        mem = trace.comm_ranks(c)
        first = int(coll_ops[sel[0]])
        if np.any(mem == UNKNOWN_PEER):
            raise UnreplayableTraceError(
                f"trace {trace.source} cannot be replayed as a whole: communicator {c} "
                f"has members the trace cannot name (UNKNOWN_PEER), used by "
                f"{COLLECTIVE_NAMES[int(kinds[sel[0]])]} at operation {first} of rank "
                f"{int(ranks[sel[0]])}"
            )
        inv = np.full(trace.n_ranks, -1, dtype=np.int64)
        inv[mem.astype(np.int64)] = np.arange(mem.shape[0], dtype=np.int64)
        me[sel] = inv[ranks[sel]]
        size[sel] = mem.shape[0]
        rsel = sel[rooted[sel]]
        ok = (peers[rsel] >= 0) & (peers[rsel] < trace.n_ranks)
        root[rsel] = np.where(ok, inv[np.clip(peers[rsel], 0, trace.n_ranks - 1)], -1)
        bad_root = rsel[root[rsel] < 0]
        if bad_root.size:
            j = int(bad_root[0])
            raise CollectiveError(
                f"root {int(peers[j])} of {COLLECTIVE_NAMES[int(kinds[j])]} at operation "
                f"{int(coll_ops[j])} (rank {int(ranks[j])}) is not a member of communicator {c}"
            )
    outside = np.flatnonzero(me < 0)
    if outside.size:
        j = int(outside[0])
        raise CollectiveError(
            f"rank {int(ranks[j])} calls {COLLECTIVE_NAMES[int(kinds[j])]} (operation "
            f"{int(coll_ops[j])}) on communicator {int(comms[j])}, which it is not a member of"
        )
    # matching tags: the call's sequence number per (rank, communicator), in trace order
    key = ranks * (int(comms.max(initial=0)) + 1) + comms
    order = np.argsort(key, kind="stable")
    sk = key[order]
    starts = np.flatnonzero(np.r_[True, sk[1:] != sk[:-1]])
    run = np.arange(n_coll, dtype=np.int64) - np.repeat(starts, np.diff(np.r_[starts, n_coll]))
    tag = np.empty(n_coll, dtype=np.int64)
    tag[order] = run & 0x3FFFFFFF
    # sizes: the buffer size of non-v collectives; v-collectives get an id per count list
    bs = trace.bytes_send[coll_ops].astype(np.int64)
    br = trace.bytes_recv[coll_ops].astype(np.int64)
    scatter = np.isin(
        kinds, [k for k, v in COLLECTIVE_NAMES.items() if v in ("scatter", "scatterv")]
    )
    nb = np.where(scatter, np.where(br != 0, br, bs), np.where(bs != 0, bs, br))
    nb[kinds == OpKind.BARRIER] = 0
    reducing = np.isin(kinds, [k for k, v in COLLECTIVE_NAMES.items() if v in REDUCING])
    op_s = np.where(reducing, trace.seconds[coll_ops] * opts.compute_scale, 0.0)
    vid = np.full(n_coll, -1, dtype=np.int64)
    v_sizes: list[CollSizes] = []
    v_index: dict[CollSizes, int] = {}
    voff = trace.vcounts_offset[coll_ops]
    vcnt = trace.count[coll_ops]
    for j in np.flatnonzero(
        np.isin(kinds, [k for k, v in COLLECTIVE_NAMES.items() if v in _VCOUNTED])
    ).tolist():
        name = COLLECTIVE_NAMES[int(kinds[j])]
        sz = _sizes(
            name,
            int(me[j]),
            int(root[j]),
            int(bs[j]),
            int(br[j]),
            int(voff[j]),
            int(vcnt[j]),
            trace.vcounts,
        )
        vid[j] = v_index.setdefault(sz, len(v_sizes))
        if vid[j] == len(v_sizes):
            v_sizes.append(sz)
    keys = np.column_stack([kinds, size, me, root, nb, vid, (op_s == 0.0).astype(np.int64)])
    uniq, tid = _unique_rows(keys)
    templates: list[_Template] = []
    used: dict[str, set[str]] = {}
    for k, p, m, rt, nbytes, v, with_combine in uniq.tolist():
        name = COLLECTIVE_NAMES[k]
        sizes = v_sizes[v] if v >= 0 else (CollSizes() if name == "barrier" else CollSizes(nbytes))
        alg = chosen.get(name) or default_algorithm(name, p, sizes)
        tkey = (name, alg, m, p, rt, sizes, bool(with_combine))
        tpl = cache.get(tkey)
        if tpl is None:
            tpl = cache[tkey] = _template(name, alg, m, p, rt, sizes, bool(with_combine))
        templates.append(tpl)
        used.setdefault(name, set()).add(alg)
    counts = np.bincount(kinds, minlength=max(COLLECTIVE_NAMES) + 1)
    counted = {COLLECTIVE_NAMES[k]: int(counts[k]) for k in COLLECTIVE_NAMES if counts[k]}
    expanded = _Expanded(templates, tid.reshape(-1).astype(np.int64), comms, tag, op_s)
    return expanded, used, counted


def _unique_rows(keys: IntArray) -> tuple[IntArray, IntArray]:
    """``np.unique(keys, axis=0, return_inverse=True)``, faster.

    The same rows in the same (lexicographic) order. When the columns' ranges fit
    in 62 bits together, each row is packed into one integer (column 0 most
    significant) and sorted as such, about ten times faster than ``np.unique`` with
    an axis, which sorts rows as opaque byte strings; otherwise a lexicographic sort.
    """
    if keys.shape[0] == 0:
        return keys.copy(), np.zeros(0, dtype=np.int64)
    lo = keys.min(axis=0)
    widths = [int(w).bit_length() for w in (keys.max(axis=0) - lo).tolist()]
    if sum(widths) <= 62:
        packed = np.zeros(keys.shape[0], dtype=np.int64)
        for c, width in enumerate(widths):
            packed = (packed << width) | (keys[:, c] - lo[c])
        _, first, inverse = np.unique(packed, return_index=True, return_inverse=True)
        return keys[first], inverse.reshape(-1).astype(np.int64)
    order = np.lexsort(keys.T[::-1])  # column 0 is the primary key
    ordered = keys[order]
    new = np.ones(keys.shape[0], dtype=np.bool_)
    new[1:] = np.any(ordered[1:] != ordered[:-1], axis=1)
    inverse = np.empty(keys.shape[0], dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    return ordered[new], inverse


def _sizes(
    name: str, me: int, root: int, bs: int, br: int, voff: int, vcnt: int, vpool: IntArray
) -> CollSizes:
    """The :class:`CollSizes` a rank's schedule needs (only what changes its steps)."""
    if name == "barrier":
        return CollSizes()
    nb = (br or bs) if name in ("scatter", "scatterv") else (bs or br)
    if name not in _VCOUNTED:
        return CollSizes(nb)
    if name in ("gatherv", "scatterv") and me != root:
        return CollSizes(nb)  # non-roots only need their own block
    vc = tuple(vpool[voff : voff + vcnt].tolist()) if voff >= 0 else ()
    return CollSizes(nb, vc)
