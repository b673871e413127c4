"""Messages of the errors the compiled TI parser reports (codes in :mod:`.ti.state`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mpiuq.simulator.trace.errors import TraceFormatError
from mpiuq.simulator.trace.limits import (
    MAX_ACTION_SECONDS,
    MAX_COUNT,
    MAX_MESSAGE_BYTES,
    MAX_RANKS,
    MAX_TAG,
)
from mpiuq.simulator.trace.ti.state import (
    E_AFTER_FINALIZE,
    E_BYTE,
    E_BYTES,
    E_CAPACITY,
    E_COUNT,
    E_DATATYPE,
    E_DEST_ANY,
    E_FEW_ARGS,
    E_FLOPS,
    E_INTEGRAL,
    E_KEY,
    E_NO_PENDING_IRECV,
    E_NUMBER,
    E_PEER,
    E_RANK_RANGE,
    E_ROOT,
    E_SECONDS,
    E_SYNTAX,
    E_TAG,
    E_VEC,
    E_WAIT_NO_REQ,
)

__all__ = ["line_error"]


def _tokens(line: str) -> list[str]:
    return line.split()


def _message(code: int, E: np.ndarray, EF: np.ndarray, line: str, rate: float) -> str:
    toks = _tokens(line)
    tok = toks[int(E[1])] if 0 <= int(E[1]) < len(toks) else "?"
    action = toks[1].lower() if len(toks) > 1 else "?"
    lo, hi = int(E[2]), int(E[3])
    if code == E_SYNTAX:
        return "expected '<rank> <action> [args]' with a rank 0, 1, ... or p0, p1, ..."
    if code == E_RANK_RANGE:
        return f"rank {toks[0] if toks else '?'} outside 0..{MAX_RANKS - 1} (the limit on ranks per trace)"
    if code == E_BYTE:
        col = int(E[2])
        raw = line.encode("utf-8", errors="surrogateescape")
        byte = raw[col] if col < len(raw) else 0
        return (
            f"byte 0x{byte:02x} at column {col + 1}: a TI line must be printable ASCII "
            "(only comments may hold other text)"
        )
    if code == E_AFTER_FINALIZE:
        return f"action {action!r} after finalize"
    if code == E_FEW_ARGS:
        return f"too few arguments for {action!r}"
    if code == E_NUMBER:
        return f"expected a number, got {tok!r}"
    if code == E_INTEGRAL:
        return f"expected an integral count, got {tok!r}"
    if code == E_FLOPS:
        return f"expected a finite amount >= 0, got {tok!r}"
    if code == E_SECONDS:
        unit = "s" if action == "sleep" else f"flops at {rate:g} flop/s"
        return (
            f"{tok} {unit} is {float(EF[0]):.4g} s, more than the {MAX_ACTION_SECONDS:g} s "
            "allowed for one action"
        )
    if code == E_PEER:
        return f"peer rank {tok} outside 0..{hi}"
    if code == E_ROOT:
        return f"root rank {tok} outside 0..{hi}"
    if code == E_DEST_ANY:
        return (
            f"destination {tok} is MPI_ANY_SOURCE (-333), which only a receive may name; "
            f"expected a rank 0..{hi}"
        )
    if code == E_DATATYPE:
        return f"unknown SimGrid datatype id {tok} (known: 0..{hi})"
    if code == E_COUNT:
        if action == "waitany":
            return (
                f"count {tok} outside {lo}..{MAX_COUNT} (waitAny N: the length of the request "
                "array; SMPI traces no call with fewer than 1)"
            )
        return f"count {tok} outside {lo}..{MAX_COUNT}"
    if code == E_BYTES:
        return (
            f"{tok} bytes: more than the {MAX_MESSAGE_BYTES} bytes (1 TiB) allowed in one operation"
        )
    if code == E_TAG:
        return f"tag {tok} outside {lo}..{MAX_TAG}" + (" (-1 or -444 = MPI_ANY_TAG)" if lo < 0 else "")
    if code == E_KEY:
        return f"request key value {tok} outside {lo}..{hi} (wait/test name src dst tag)"
    if code == E_WAIT_NO_REQ:
        return (
            f"wait for request (src, dst, tag)=({int(E[1])}, {lo}, {hi}) that no isend/irecv posted"
        )
    if code == E_NO_PENDING_IRECV:
        return "wait without a pending Irecv"
    if code == E_CAPACITY:  # pragma: no cover - tables are sized from the line count
        return "internal parser error: a table sized from the line count overflowed"
    if code == E_VEC:
        return f"expected {lo} per-rank counts for {action}, got {hi}"
    return f"parser error code {code}"  # pragma: no cover - every code has a message


def line_error(
    E: np.ndarray, EF: np.ndarray, file: Path, buf: np.ndarray, rate: float
) -> TraceFormatError:
    """The :class:`TraceFormatError` for the error the kernel left in ``E`` (text ``buf``)."""
    code = int(E[0])
    raw = bytes(buf[int(E[6]) : int(E[7])])
    line = raw.decode("ascii", errors="backslashreplace")
    text = _message(code, E, EF, raw.decode("utf-8", errors="surrogateescape"), rate)
    rank = int(E[8]) if code != E_RANK_RANGE and int(E[8]) >= 0 else None
    shown = line.strip()
    shown = shown[:80] + ("..." if len(shown) > 80 else "")
    return TraceFormatError(f"{text} in {shown!r}", file=str(file), rank=rank, record=int(E[5]))
