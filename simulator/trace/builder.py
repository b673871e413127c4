"""Incremental construction of a :class:`~mpiuq.simulator.trace.ir.Trace`.

Readers append operations rank by rank; the builder interns call names, hands out
trace-wide request ids, keeps the global communicator table, and at the end packs
everything into the flat columns of :class:`Trace`. Rows can be patched (an OTF2
receive learns its peer only at completion) or dropped (a SimGrid ``test`` that
turned out to fail) before :meth:`TraceBuilder.build`.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from mpiuq.simulator.trace.ir import NO_PEER, OP_COLUMNS, UNKNOWN_PEER, OpKind, Trace

ROW_DTYPE = np.dtype(list(OP_COLUMNS.items()))
_FIELD_INDEX = {name: i for i, name in enumerate(OP_COLUMNS)}
_COMPUTE = int(OpKind.COMPUTE)
_WAITALL = int(OpKind.WAITALL)


class TraceBuilder:
    """Collects operations of ``n_ranks`` ranks and builds a :class:`Trace`.

    Parameters
    ----------
    fmt : str
        Trace format name stored in the result.
    source : str
        Path the trace was read from.
    n_ranks : int
        Size of MPI_COMM_WORLD; communicator 0 is created with members 0..n_ranks-1.
    """

    def __init__(self, fmt: str, source: str, n_ranks: int) -> None:
        self.format = fmt
        self.source = source
        self.n_ranks = n_ranks
        self.rows: list[list[tuple[int | float | bool, ...]]] = [[] for _ in range(n_ranks)]
        self.comms: list[list[int]] = [list(range(n_ranks))]
        self._comm_keys: dict[object, int] = {}
        self._calls: dict[str, int] = {}
        self.unsupported: Counter[str] = Counter()
        self.notes: list[str] = []
        self.n_requests = 0
        self._waitlists: list[dict[int, list[int]]] = [{} for _ in range(n_ranks)]
        self._vlists: list[dict[int, list[int]]] = [{} for _ in range(n_ranks)]
        self._patches: list[dict[int, dict[str, int | float]]] = [{} for _ in range(n_ranks)]
        self._dropped: list[set[int]] = [set() for _ in range(n_ranks)]
        self._compute_call = self.call_id("compute")

    # --- tables -------------------------------------------------------------------------
    def call_id(self, name: str) -> int:
        """Index of MPI function ``name`` in ``call_names`` (interned)."""
        idx = self._calls.get(name)
        if idx is None:
            idx = self._calls[name] = len(self._calls)
        return idx

    def add_comm(self, members: list[int], key: object = None) -> int:
        """Register a communicator with the given world ranks; return its global id.

        A communicator registered again with the same ``key`` returns the same id.
        """
        if key is not None and key in self._comm_keys:
            return self._comm_keys[key]
        cid = len(self.comms)
        self.comms.append(list(members))
        if key is not None:
            self._comm_keys[key] = cid
        return cid

    def comm_size(self, comm: int) -> int:
        """Number of members of global communicator ``comm``."""
        return len(self.comms[comm])

    def world_rank(self, comm: int, local: int) -> int:
        """World rank of communicator rank ``local`` of global communicator ``comm``.

        Raises
        ------
        IndexError
            If ``local`` is not a rank of ``comm``.
        """
        members = self.comms[comm]
        if not 0 <= local < len(members):
            raise IndexError(f"rank {local} is not in communicator {comm} of size {len(members)}")
        return members[local]

    def new_request(self) -> int:
        """A fresh trace-wide request id."""
        rid = self.n_requests
        self.n_requests += 1
        return rid

    # --- operations ---------------------------------------------------------------------
    def add(
        self,
        rank: int,
        kind: int,
        call: int,
        *,
        peer: int = NO_PEER,
        peer2: int = NO_PEER,
        tag: int = 0,
        tag2: int = 0,
        comm: int = 0,
        bytes_send: int = 0,
        bytes_recv: int = 0,
        request: int = -1,
        seconds: float = 0.0,
        nonblocking: bool = False,
    ) -> int:
        """Append one operation to ``rank``; return its index within the rank."""
        rows = self.rows[rank]
        rows.append(
            (
                kind,
                call,
                peer,
                peer2,
                tag,
                tag2,
                comm,
                bytes_send,
                bytes_recv,
                request,
                0,
                -1,
                seconds,
                nonblocking,
            )
        )
        return len(rows) - 1

    def add_compute(self, rank: int, seconds: float, call: int | None = None) -> None:
        """Append ``seconds`` of computation, merged into a directly preceding COMPUTE."""
        if seconds <= 0.0:
            return
        rows = self.rows[rank]
        if rows and rows[-1][0] == _COMPUTE and len(rows) - 1 not in self._dropped[rank]:
            last = rows[-1]
            rows[-1] = (*last[:12], last[12] + seconds, last[13])  # type: ignore[operator]
            return
        c = self._compute_call if call is None else call
        rows.append((_COMPUTE, c, NO_PEER, NO_PEER, 0, 0, 0, 0, 0, -1, 0, -1, seconds, False))

    def add_waitall(self, rank: int, call: int, requests: list[int]) -> int:
        """Append a WAITALL completing ``requests`` (the list may still change before build)."""
        idx = self.add(rank, _WAITALL, call)
        self._waitlists[rank][idx] = requests
        return idx

    def add_vcollective(
        self, rank: int, kind: int, call: int, vcounts: list[int], **cols: int | float
    ) -> int:
        """Append a v-collective whose per-rank byte counts are ``vcounts``."""
        idx = self.add(rank, kind, call, **cols)  # type: ignore[arg-type]
        self._vlists[rank][idx] = vcounts
        return idx

    def n_ops(self, rank: int) -> int:
        """Number of operations appended to ``rank`` so far."""
        return len(self.rows[rank])

    def patch(self, rank: int, index: int, **cols: int | float) -> None:
        """Overwrite columns of an already appended operation."""
        self._patches[rank].setdefault(index, {}).update(cols)

    def drop(self, rank: int, index: int) -> None:
        """Remove an already appended operation from the result."""
        self._dropped[rank].add(index)

    def note(self, text: str) -> None:
        """Record a human-readable note on what the reader assumed."""
        if text not in self.notes:
            self.notes.append(text)

    # --- result -------------------------------------------------------------------------
    def build(self) -> Trace:
        """Pack the collected operations into a validated :class:`Trace`."""
        per_rank: list[np.ndarray] = []
        wait_pool: list[int] = []
        v_pool: list[int] = []
        for r, rows in enumerate(self.rows):
            arr = np.array(rows, dtype=ROW_DTYPE) if rows else np.zeros(0, dtype=ROW_DTYPE)
            for i, patch in self._patches[r].items():
                for name, value in patch.items():
                    arr[name][i] = value
            dropped = self._dropped[r]
            for i in sorted(self._waitlists[r]):
                if i not in dropped:
                    reqs = self._waitlists[r][i]
                    arr["request"][i] = len(wait_pool)
                    arr["count"][i] = len(reqs)
                    wait_pool.extend(reqs)
            for i in sorted(self._vlists[r]):
                if i not in dropped:
                    counts = self._vlists[r][i]
                    arr["vcounts_offset"][i] = len(v_pool)
                    arr["count"][i] = len(counts)
                    v_pool.extend(counts)
            if dropped:
                arr = np.delete(arr, sorted(dropped))
            per_rank.append(arr)
        allrows = np.concatenate(per_rank) if per_rank else np.zeros(0, dtype=ROW_DTYPE)
        rank_ptr = np.zeros(self.n_ranks + 1, dtype=np.int64)
        rank_ptr[1:] = np.cumsum([a.shape[0] for a in per_rank])
        comm_ptr = np.zeros(len(self.comms) + 1, dtype=np.int64)
        comm_ptr[1:] = np.cumsum([len(m) for m in self.comms])
        members = [x for m in self.comms for x in m]
        cols: dict[str, np.ndarray] = {
            name: np.ascontiguousarray(allrows[name]) for name in OP_COLUMNS
        }
        names = sorted(self._calls, key=self._calls.__getitem__)
        trace = Trace(
            format=self.format,
            source=self.source,
            n_ranks=self.n_ranks,
            rank_ptr=rank_ptr,
            wait_reqs=np.asarray(wait_pool, dtype=np.int64),
            vcounts=np.asarray(v_pool, dtype=np.int64),
            comm_ptr=comm_ptr,
            comm_members=np.asarray(members, dtype=np.int32),
            call_names=tuple(names),
            n_requests=self.n_requests,
            unsupported=dict(sorted(self.unsupported.items())),
            notes=tuple(self.notes),
            **cols,
        )
        trace.validate()
        return trace


__all__ = ["ROW_DTYPE", "UNKNOWN_PEER", "TraceBuilder"]
