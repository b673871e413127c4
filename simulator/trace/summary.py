"""The aggregate figures of a trace (:meth:`~mpiuq.simulator.trace.ir.Trace.summary`)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["TraceSummary"]


@dataclass(frozen=True, slots=True)
class TraceSummary:
    """Aggregate figures of a trace, as shown by ``mpiuq trace info``.

    Attributes
    ----------
    ops_per_kind : dict
        ``OpKind`` name -> number of operations.
    ops_per_call : dict
        MPI function name -> number of operations it produced.
    p2p_bytes_sent : int
        Bytes sent by SEND, ISEND and SENDRECV operations over all ranks.
    collective_calls : int
        Number of collective operations over all ranks.
    compute_seconds : float
        Sum of COMPUTE durations over all ranks, in seconds.
    compute_seconds_per_rank_max : float
        Largest per-rank sum of COMPUTE durations, in seconds.
    communicator_sizes : tuple of int
        Size of every global communicator (index = communicator id).
    """

    format: str
    source: str
    n_ranks: int
    n_ops: int
    ops_per_kind: dict[str, int]
    ops_per_call: dict[str, int]
    p2p_messages_sent: int
    p2p_bytes_sent: int
    collective_calls: int
    compute_seconds: float
    compute_seconds_per_rank_max: float
    n_requests: int
    n_uncompleted_requests: int
    communicator_sizes: tuple[int, ...]
    unsupported: dict[str, int]
    notes: tuple[str, ...]

    def as_dict(self) -> dict[str, object]:
        """Plain-data form (JSON serialisable)."""
        return {
            "format": self.format,
            "source": self.source,
            "n_ranks": self.n_ranks,
            "n_ops": self.n_ops,
            "ops_per_kind": dict(self.ops_per_kind),
            "ops_per_call": dict(self.ops_per_call),
            "p2p_messages_sent": self.p2p_messages_sent,
            "p2p_bytes_sent": self.p2p_bytes_sent,
            "collective_calls": self.collective_calls,
            "compute_seconds": self.compute_seconds,
            "compute_seconds_per_rank_max": self.compute_seconds_per_rank_max,
            "n_requests": self.n_requests,
            "n_uncompleted_requests": self.n_uncompleted_requests,
            "communicator_sizes": list(self.communicator_sizes),
            "unsupported": dict(self.unsupported),
            "notes": list(self.notes),
        }
