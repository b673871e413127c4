"""Constants and names shared by the DUMPI reader modules (sst-dumpi ``constants.h``)."""

from __future__ import annotations

__all__ = ["BOOKKEEPING", "COMM_NULL", "COMM_SELF", "COMM_WORLD", "CREATE", "mpi_name"]

COMM_NULL, COMM_WORLD, COMM_SELF = 1, 2, 3
GROUP_NULL, GROUP_EMPTY = 1, 2
REQUEST_NULL = 1
BOOKKEEPING = frozenset(
    {
        "init",
        "init_thread",
        "finalize",
        "comm_split",
        "comm_dup",
        "comm_create",
        "comm_free",
        "comm_group",
        "group_incl",
        "group_excl",
        "group_free",
    }
)
CREATE = frozenset({"comm_split", "comm_dup", "comm_create"})
_MPI_NAMES = {"sendrecv_replace": "MPI_Sendrecv_replace", "reduce_scatter": "MPI_Reduce_scatter"}


def mpi_name(short: str) -> str:
    """MPI function name of a pydumpi callback name (``isend`` -> ``MPI_Isend``)."""
    return _MPI_NAMES.get(short, "MPI_" + short.capitalize())
