"""Collectives expanded: each collective call of a trace mapped to a schedule template.

Array operations find each call's position in its communicator, its root's position,
its matching tag (the call's sequence number per rank and communicator) and the sizes
its schedule depends on; a template (:class:`Template`: the rows of one rank's
schedule, peers as communicator ranks) is built in Python once per distinct
(collective, rank position, communicator size, root, sizes) and shared by the calls
that have it.
"""

from __future__ import annotations

from dataclasses import dataclass

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
)
from mpiuq.simulator.lowering.lowered import LoweringOptions, UnreplayableTraceError
from mpiuq.simulator.program.table import Op
from mpiuq.simulator.trace.ir import UNKNOWN_PEER, OpKind, Trace

__all__ = ["COLLECTIVE_NAMES", "Expanded", "Template", "expand_collectives"]

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


@dataclass(frozen=True, slots=True)
class Template:
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


#: Columns of the rows template() lists (kind, peer, bytes, request, count), in the table.
_TPL_ORDER = [TPL_KIND, TPL_PEER, TPL_BYTES, TPL_REQ, TPL_COUNT]


def template(
    collective: str,
    algorithm: str,
    me: int,
    p: int,
    root: int,
    sizes: CollSizes,
    with_combine: bool,
) -> Template:
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
    return Template(
        rows=_table(rows),
        combine=np.array(combine, dtype=np.float64),
        wait_list=np.array(wl, dtype=np.int64),
        n_req=n_req,
    )


def _table(rows: list[int]) -> IntArray:
    """The flattened rows of :func:`template` as a table with the ``TPL_*`` columns."""
    listed = np.array(rows, dtype=np.int64).reshape(-1, len(_TPL_ORDER))
    if list(range(TPL_WIDTH)) == _TPL_ORDER:
        return listed  # the table's own column order: nothing to move
    table = np.zeros((listed.shape[0], TPL_WIDTH), dtype=np.int64)
    table[:, _TPL_ORDER] = listed
    return table


@dataclass(frozen=True, slots=True)
class Expanded:
    """Collective calls mapped to a small set of distinct schedule templates.

    ``tid[j]`` is the template of collective ``j`` (in ``coll_ops`` order); ``comm``,
    ``tag`` and ``op_s`` are its trace communicator, matching tag and trace operator
    seconds.
    """

    templates: list[Template]
    tid: IntArray
    comm: IntArray
    tag: IntArray
    op_s: npt.NDArray[np.float64]


def expand_collectives(
    trace: Trace,
    coll_ops: IntArray,
    opts: LoweringOptions,
    cache: dict[tuple[object, ...], Template] | None = None,
) -> tuple[Expanded, dict[str, set[str]], dict[str, int]]:
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
    kinds = trace.kind[coll_ops].astype(np.int64)
    ranks = trace.rank_of_op()[coll_ops].astype(np.int64)
    comms = trace.comm[coll_ops].astype(np.int64)
    me, root, size = _positions(trace, coll_ops, kinds, ranks, comms)
    tag = _sequence_tags(ranks, comms)
    nb, op_s, vid, v_sizes = _sizes_of_calls(trace, coll_ops, kinds, me, root, opts)
    keys = np.column_stack([kinds, size, me, root, nb, vid, (op_s == 0.0).astype(np.int64)])
    uniq, tid = _unique_rows(keys)
    templates: list[Template] = []
    used: dict[str, set[str]] = {}
    for k, p, m, rt, nbytes, v, with_combine in uniq.tolist():
        name = COLLECTIVE_NAMES[k]
        sizes = v_sizes[v] if v >= 0 else (CollSizes() if name == "barrier" else CollSizes(nbytes))
        alg = chosen.get(name) or default_algorithm(name, p, sizes)
        tkey = (name, alg, m, p, rt, sizes, bool(with_combine))
        tpl = cache.get(tkey)
        if tpl is None:
            tpl = cache[tkey] = template(name, alg, m, p, rt, sizes, bool(with_combine))
        templates.append(tpl)
        used.setdefault(name, set()).add(alg)
    counts = np.bincount(kinds, minlength=max(COLLECTIVE_NAMES) + 1)
    counted = {COLLECTIVE_NAMES[k]: int(counts[k]) for k in COLLECTIVE_NAMES if counts[k]}
    expanded = Expanded(templates, tid.reshape(-1).astype(np.int64), comms, tag, op_s)
    return expanded, used, counted


def _positions(
    trace: Trace, coll_ops: IntArray, kinds: IntArray, ranks: IntArray, comms: IntArray
) -> tuple[IntArray, IntArray, IntArray]:
    """Each call's rank position in its communicator, its root's position (rooted
    collectives; 0 otherwise) and the communicator's size."""
    n_coll = coll_ops.shape[0]
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
    return me, root, size


def _sequence_tags(ranks: IntArray, comms: IntArray) -> IntArray:
    """Matching tags: each call's sequence number per (rank, communicator), in trace order."""
    n_coll = ranks.shape[0]
    key = ranks * (int(comms.max(initial=0)) + 1) + comms
    order = np.argsort(key, kind="stable")
    sk = key[order]
    starts = np.flatnonzero(np.r_[True, sk[1:] != sk[:-1]])
    run = np.arange(n_coll, dtype=np.int64) - np.repeat(starts, np.diff(np.r_[starts, n_coll]))
    tag = np.empty(n_coll, dtype=np.int64)
    tag[order] = run & 0x3FFFFFFF
    return tag


def _sizes_of_calls(
    trace: Trace,
    coll_ops: IntArray,
    kinds: IntArray,
    me: IntArray,
    root: IntArray,
    opts: LoweringOptions,
) -> tuple[IntArray, npt.NDArray[np.float64], IntArray, list[CollSizes]]:
    """What each call's schedule depends on besides positions: ``(nb, op_s, vid, v_sizes)``,
    the buffer size of non-v collectives, the trace operator's seconds (scaled) of
    reductions, and for v-collectives an id into ``v_sizes``, their distinct count lists."""
    n_coll = coll_ops.shape[0]
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
    return nb, op_s, vid, v_sizes


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
