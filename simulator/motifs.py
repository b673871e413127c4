"""Synthetic application motifs written as traces (for scale and what-if studies).

Each motif builds a :class:`~mpiuq.simulator.trace.ir.Trace` (``format="synthetic"``)
directly as flat numpy columns -- no Python loop per operation -- so that millions of
operations at 16,384 ranks take seconds. Every rank runs ``iterations`` iterations of:

* ``halo3d`` -- ranks on a periodic 3-D grid (:func:`dims_create`); compute, IRECV
  from every neighbour (6 faces or 26 faces/edges/corners; axes of extent 1 have no
  neighbours), ISEND to every neighbour, WAITALL, and every ``allreduce_every``
  iterations an 8-byte ALLREDUCE. The tag of a message is the index of its direction
  in the 26-direction list, so the two ends of every message agree even when a grid
  extent of 2 makes the +1 and -1 neighbours the same rank.
* ``allreduce`` -- compute, ALLREDUCE of ``message_bytes`` (Nekbone-like).
* ``alltoall`` -- compute, ALLTOALL of ``message_bytes`` per pair (FFT-like transposes).
* ``sweep`` -- 2-D wavefront from the north-west corner over a ``px x py`` grid
  (rank ``y * px + x``): blocking RECV from west and north, compute, blocking SEND to
  east and south (tags 1 = eastward, 2 = southward).
* ``random`` -- a seeded random derangement each iteration: IRECV from the preimage,
  ISEND to the image, WAITALL (tag = iteration index).

Compute phases are ``compute_s`` seconds (omitted when 0); message sizes in bytes.

Examples
--------
>>> trace = synthesize(MotifSpec("halo3d", n_ranks=8, iterations=2, neighbours=6))
>>> trace.n_ranks, trace.summary().ops_per_kind["ISEND"]
(8, 96)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.trace.ir import NO_PEER, OP_COLUMNS, OpKind, Trace

__all__ = ["CALL_NAMES", "DEFAULT_BYTES", "MOTIFS", "MotifSpec", "dims_create", "synthesize"]

MOTIFS = ("halo3d", "allreduce", "alltoall", "sweep", "random")
#: Message size in bytes used when ``MotifSpec.message_bytes`` is None.
DEFAULT_BYTES = {"halo3d": 4096, "allreduce": 8, "alltoall": 1024, "sweep": 4096, "random": 4096}
#: Bytes of the periodic ALLREDUCE of ``halo3d`` (a global residual).
HALO_ALLREDUCE_BYTES = 8

_CALLS: dict[OpKind, str] = {
    OpKind.COMPUTE: "compute",
    OpKind.SEND: "MPI_Send",
    OpKind.RECV: "MPI_Recv",
    OpKind.ISEND: "MPI_Isend",
    OpKind.IRECV: "MPI_Irecv",
    OpKind.WAITALL: "MPI_Waitall",
    OpKind.ALLREDUCE: "MPI_Allreduce",
    OpKind.ALLTOALL: "MPI_Alltoall",
}
CALL_NAMES = tuple(_CALLS.values())
_CALL_OF = {kind: np.int16(i) for i, kind in enumerate(_CALLS)}
_DEFAULTS: dict[str, int | float | bool] = {
    "peer": NO_PEER,
    "peer2": NO_PEER,
    "tag": 0,
    "tag2": 0,
    "comm": 0,
    "bytes_send": 0,
    "bytes_recv": 0,
    "request": -1,
    "count": 0,
    "vcounts_offset": -1,
    "seconds": 0.0,
    "nonblocking": False,
}

#: One slot of the per-iteration pattern: column name -> value broadcastable to
#: (n_ranks, iterations); the key "present" (bool) drops the slot where False.
Slot = dict[str, object]


@dataclass(frozen=True, slots=True)
class MotifSpec:
    """What to synthesise.

    Parameters
    ----------
    motif : str
        One of :data:`MOTIFS`.
    n_ranks : int
        Number of MPI ranks (>= 1; >= 2 for ``random``).
    iterations : int
        Iterations per rank (>= 1).
    message_bytes : int, optional
        Bytes per message (per pair for ``alltoall``, per rank buffer for
        ``allreduce``); None: :data:`DEFAULT_BYTES` of the motif.
    compute_s : float
        Compute time per iteration in seconds (>= 0; 0 writes no COMPUTE operation).
    neighbours : {6, 26}
        ``halo3d``: face neighbours only, or faces, edges and corners.
    allreduce_every : int
        ``halo3d``: an ALLREDUCE after every ``allreduce_every``-th iteration (>= 1).
    seed : int
        ``random``: seed of the permutations.
    """

    motif: str
    n_ranks: int
    iterations: int
    message_bytes: int | None = None
    compute_s: float = 0.0
    neighbours: int = 26
    allreduce_every: int = 1
    seed: int = 0

    def __post_init__(self) -> None:
        def bad(name: str, value: object, allowed: str) -> SettingError:
            return SettingError(f"motif {name}={value!r} is invalid: expected {allowed}")

        if self.motif not in MOTIFS:
            raise bad("motif", self.motif, f"one of {MOTIFS}")
        low = 2 if self.motif == "random" else 1
        if not _is_int(self.n_ranks) or self.n_ranks < low:
            raise bad("n_ranks", self.n_ranks, f"a whole number >= {low}")
        if not _is_int(self.iterations) or self.iterations < 1:
            raise bad("iterations", self.iterations, "a whole number >= 1")
        if self.message_bytes is not None and (
            not _is_int(self.message_bytes) or self.message_bytes < 0
        ):
            raise bad("message_bytes", self.message_bytes, "a whole number of bytes >= 0")
        if not (isinstance(self.compute_s, int | float) and math.isfinite(self.compute_s)) or (
            self.compute_s < 0
        ):
            raise bad("compute_s", self.compute_s, "a finite number of seconds >= 0")
        if self.neighbours not in (6, 26):
            raise bad("neighbours", self.neighbours, "6 or 26")
        if not _is_int(self.allreduce_every) or self.allreduce_every < 1:
            raise bad("allreduce_every", self.allreduce_every, "a whole number >= 1")
        if not _is_int(self.seed):
            raise bad("seed", self.seed, "a whole number")

    @property
    def nbytes(self) -> int:
        """Message size in bytes (the motif's default when not given)."""
        return DEFAULT_BYTES[self.motif] if self.message_bytes is None else self.message_bytes


def _is_int(value: object) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def dims_create(n: int, ndims: int) -> tuple[int, ...]:
    """Most balanced factorisation of ``n`` into ``ndims`` factors, largest first.

    Like ``MPI_Dims_create``: minimises the largest factor, then the spread.

    >>> dims_create(16384, 3), dims_create(12, 2), dims_create(7, 3)
    ((32, 32, 16), (4, 3), (7, 1, 1))
    """
    if n < 1 or ndims < 1:
        raise SettingError(f"dims_create(n={n}, ndims={ndims}): expected n >= 1 and ndims >= 1")

    def splits(m: int, k: int, cap: int) -> list[tuple[int, ...]]:
        if k == 1:
            return [(m,)] if m <= cap else []
        out = []
        for first in range(min(m, cap), 0, -1):
            if m % first == 0 and first**k >= m:
                out += [(first, *rest) for rest in splits(m // first, k - 1, first)]
        return out

    return min(splits(n, ndims, n), key=lambda d: (d[0], d[0] - d[-1]))


def _assemble(spec: MotifSpec, slots: list[Slot], notes: tuple[str, ...]) -> Trace:
    """Pack per-iteration slots into a :class:`Trace` (rank-major, iteration, slot order)."""
    n, k, s = spec.n_ranks, spec.iterations, len(slots)
    shape = (n, k, s)
    mask: np.ndarray | None = None
    if any("present" in slot for slot in slots):
        mask = np.empty(shape, dtype=bool)
        for i, slot in enumerate(slots):
            mask[:, :, i] = slot.get("present", True)
    cols: dict[str, np.ndarray] = {}
    kinds = [OpKind(int(slot["kind"])) for slot in slots]  # type: ignore[call-overload]
    for name, dtype in OP_COLUMNS.items():
        if name == "call":
            values: list[object] = [_CALL_OF[kind] for kind in kinds]
        else:
            values = [slot.get(name, _DEFAULTS.get(name)) for slot in slots]
        # stack the slot values into one (n or 1, k or 1, s) array and broadcast it
        arrays = [np.asarray(v, dtype=dtype) for v in values]
        rows = n if any(a.ndim == 2 and a.shape[0] > 1 for a in arrays) else 1
        its = k if any(a.ndim == 2 and a.shape[1] > 1 for a in arrays) else 1
        stacked = np.stack([np.broadcast_to(a, (rows, its)) for a in arrays], axis=-1)
        full = np.empty(shape, dtype=dtype)
        full[...] = stacked
        cols[name] = full.reshape(-1) if mask is None else full[mask]
        del full, stacked
    per_rank = np.full(n, k * s, dtype=np.int64) if mask is None else mask.sum(axis=(1, 2))
    rank_ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(per_rank, out=rank_ptr[1:])
    kind = cols["kind"]
    posts = (kind == OpKind.ISEND) | (kind == OpKind.IRECV)
    n_posts = int(np.count_nonzero(posts))
    cols["request"][posts] = np.arange(n_posts, dtype=np.int64)
    waits = np.flatnonzero(kind == OpKind.WAITALL)
    if waits.size:
        # each WAITALL completes the posts since the previous one (motifs close every
        # iteration's posts in the same rank, so the pool is simply 0..n_posts-1)
        ends = np.cumsum(posts, dtype=np.int64)[waits]
        starts = np.concatenate([[0], ends[:-1]])
        cols["request"][waits] = starts
        cols["count"][waits] = ends - starts
    world = np.arange(n, dtype=np.int32)
    return Trace(
        format="synthetic",
        source=f"synthetic:{spec.motif}(ranks={n},iterations={k},bytes={spec.nbytes})",
        n_ranks=n,
        rank_ptr=rank_ptr,
        wait_reqs=np.arange(n_posts, dtype=np.int64),
        vcounts=np.zeros(0, dtype=np.int64),
        comm_ptr=np.array([0, n], dtype=np.int64),
        comm_members=world,
        call_names=CALL_NAMES,
        n_requests=n_posts,
        notes=notes,
        **cols,  # type: ignore[arg-type]
    )


def _compute(spec: MotifSpec) -> list[Slot]:
    if spec.compute_s == 0:
        return []
    return [{"kind": OpKind.COMPUTE, "seconds": float(spec.compute_s)}]


def _directions(neighbours: int, dims: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Offsets (D, 3) of the halo and their tags (index in the 26-direction list)."""
    every = np.array([d for d in itertools.product((-1, 0, 1), repeat=3) if any(d)])
    tags = np.arange(every.shape[0])
    keep = np.abs(every).sum(axis=1) == 1 if neighbours == 6 else np.ones(len(every), bool)
    keep &= np.all((every == 0) | (np.array(dims) > 1), axis=1)
    return every[keep], tags[keep]


def _halo3d(spec: MotifSpec) -> Trace:
    dims = dims_create(spec.n_ranks, 3)
    offsets, tags = _directions(spec.neighbours, dims)
    extent = np.array(dims)
    ranks = np.arange(spec.n_ranks)
    coords = np.stack(np.unravel_index(ranks, dims), axis=1)  # (n, 3), row-major ranks

    def shifted(sign: int) -> np.ndarray:
        moved = (coords[:, None, :] + sign * offsets[None, :, :]) % extent
        return np.ravel_multi_index(tuple(np.moveaxis(moved, 2, 0)), dims).astype(np.int32)

    to, frm = shifted(+1), shifted(-1)  # (n, D)
    nbytes = spec.nbytes
    slots = _compute(spec)
    slots += [
        {"kind": OpKind.IRECV, "peer": frm[:, [d]], "tag": int(t), "bytes_recv": nbytes}
        for d, t in enumerate(tags)
    ]
    slots += [
        {"kind": OpKind.ISEND, "peer": to[:, [d]], "tag": int(t), "bytes_send": nbytes}
        for d, t in enumerate(tags)
    ]
    if len(tags):
        slots.append({"kind": OpKind.WAITALL})
    every = spec.allreduce_every
    due = (np.arange(spec.iterations) + 1) % every == 0
    reduce_slot: Slot = {
        "kind": OpKind.ALLREDUCE,
        "bytes_send": HALO_ALLREDUCE_BYTES,
        "bytes_recv": HALO_ALLREDUCE_BYTES,
    }
    if not due.all():
        reduce_slot["present"] = due[None, :]
    if due.any():
        slots.append(reduce_slot)
    note = (
        f"halo3d: grid {dims[0]}x{dims[1]}x{dims[2]} periodic, {len(tags)} neighbours, "
        f"{nbytes} B per message, {HALO_ALLREDUCE_BYTES} B allreduce every {every} iterations"
    )
    return _assemble(spec, slots, (note,))


def _collective(kind: OpKind) -> Callable[[MotifSpec], Trace]:
    def build(spec: MotifSpec) -> Trace:
        nbytes = spec.nbytes
        slots: list[Slot] = [
            *_compute(spec),
            {"kind": kind, "bytes_send": nbytes, "bytes_recv": nbytes},
        ]
        note = f"{spec.motif}: one {kind.name} of {nbytes} B per rank and iteration"
        return _assemble(spec, slots, (note,))

    return build


def _sweep(spec: MotifSpec) -> Trace:
    px, py = dims_create(spec.n_ranks, 2)
    ranks = np.arange(spec.n_ranks, dtype=np.int32)
    y, x = np.divmod(ranks, px)
    nbytes = spec.nbytes
    col = ranks[:, None]
    slots: list[Slot] = [
        {
            "kind": OpKind.RECV,
            "peer": col - 1,
            "tag": 1,
            "bytes_recv": nbytes,
            "present": (x > 0)[:, None],
        },
        {
            "kind": OpKind.RECV,
            "peer": col - px,
            "tag": 2,
            "bytes_recv": nbytes,
            "present": (y > 0)[:, None],
        },
        *_compute(spec),
        {
            "kind": OpKind.SEND,
            "peer": col + 1,
            "tag": 1,
            "bytes_send": nbytes,
            "present": (x < px - 1)[:, None],
        },
        {
            "kind": OpKind.SEND,
            "peer": col + px,
            "tag": 2,
            "bytes_send": nbytes,
            "present": (y < py - 1)[:, None],
        },
    ]
    # peers of absent slots may fall outside the world; they are dropped by the mask,
    # but clip them so that the full-shape staging arrays hold valid int32 values
    for slot in slots:
        if "peer" in slot:
            slot["peer"] = np.clip(slot["peer"], 0, spec.n_ranks - 1)  # type: ignore[call-overload]
    note = f"sweep: {px}x{py} wavefront from the north-west corner, {nbytes} B per message"
    return _assemble(spec, slots, (note,))


def _derangement(n: int, rng: np.random.Generator) -> np.ndarray:
    """Uniform random permutation with its fixed points moved (no rank sends to itself)."""
    perm = rng.permutation(n)
    fixed = np.flatnonzero(perm == np.arange(n))
    if fixed.size >= 2:
        perm[fixed] = np.roll(fixed, 1)
    elif fixed.size == 1:
        f = int(fixed[0])
        other = int(rng.integers(n - 1))
        other += other >= f
        perm[f], perm[other] = perm[other], f
    return perm


def _random(spec: MotifSpec) -> Trace:
    rng = np.random.default_rng(spec.seed)
    n, k = spec.n_ranks, spec.iterations
    image = np.empty((n, k), dtype=np.int32)
    preimage = np.empty((n, k), dtype=np.int32)
    for it in range(k):
        perm = _derangement(n, rng)
        image[:, it] = perm
        preimage[perm, it] = np.arange(n)
    tag = np.arange(k, dtype=np.int32)[None, :]
    nbytes = spec.nbytes
    slots: list[Slot] = [
        *_compute(spec),
        {"kind": OpKind.IRECV, "peer": preimage, "tag": tag, "bytes_recv": nbytes},
        {"kind": OpKind.ISEND, "peer": image, "tag": tag, "bytes_send": nbytes},
        {"kind": OpKind.WAITALL},
    ]
    note = f"random: seeded derangement per iteration (seed {spec.seed}), {nbytes} B per message"
    return _assemble(spec, slots, (note,))


_BUILDERS: dict[str, Callable[[MotifSpec], Trace]] = {
    "halo3d": _halo3d,
    "allreduce": _collective(OpKind.ALLREDUCE),
    "alltoall": _collective(OpKind.ALLTOALL),
    "sweep": _sweep,
    "random": _random,
}


def synthesize(spec: MotifSpec) -> Trace:
    """Build the trace of a motif (see the module docstring).

    Parameters
    ----------
    spec : MotifSpec
        Motif, ranks, iterations, bytes, compute seconds and motif options.

    Returns
    -------
    Trace
        ``format="synthetic"``, communicator 0 = MPI_COMM_WORLD only. Not validated
        here (call :meth:`Trace.validate`; it takes a few seconds at 10^7 operations).
    """
    return _BUILDERS[spec.motif](spec)
