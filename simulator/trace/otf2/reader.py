"""Reader of OTF2 traces (Score-P, ``dumpi2otf2``) with the official ``otf2`` bindings.

The world rank of a location is its index in the MPI ``COMM_LOCATIONS`` group
(robust for ``dumpi2otf2`` output, whose locations all hang off location group 0).
Peers and roots are ranks in the event's communicator; ``COMM_SELF``-typed groups
(MPI_COMM_SELF and, in Score-P, every size-1 communicator) and empty groups (how
``dumpi2otf2`` writes MPI_COMM_SELF) resolve to the calling rank.

Irecv peers and sizes are only known at completion (``MpiIrecv``), so the IRECV
operation is patched then. Collective sizes are Score-P totals and are converted
to per-rank buffer sizes (see FORMATS.md). Compute gaps are Leave(MPI_a) ->
Enter(MPI_b) on one location, minus time with measurement switched off.
Nonblocking collectives recorded only as regions (no sizes) are counted in
``unsupported``.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from mpiuq.simulator.trace.child import Progress, run_contained
from mpiuq.simulator.trace.errors import TraceFormatError, UnsupportedTraceError
from mpiuq.simulator.trace.ir import Trace
from mpiuq.simulator.trace.limits import (
    MAX_RANKS,
)
from mpiuq.simulator.trace.otf2.events import EventReader
from mpiuq.simulator.trace.sniff import is_otf2_anchor

__all__ = ["find_otf2_anchor", "read_otf2"]

_BINDING_FAILURE = "An unhandled python exception has occurred"
_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception)\b")


def find_otf2_anchor(path: str | Path) -> Path:
    """The anchor file of an OTF2 archive: the path itself or the one in its directory.

    Recognised by content (the OTF2 header), not by the ``.otf2`` suffix.
    """
    p = Path(path)
    if p.is_dir():
        anchors = sorted(f for f in p.iterdir() if f.is_file() and is_otf2_anchor(f))
        if len(anchors) != 1:
            raise UnsupportedTraceError(
                f"directory {p} holds {len(anchors)} OTF2 anchor files, expected exactly one"
            )
        p = anchors[0]
    if not p.is_file() or not is_otf2_anchor(p):
        raise UnsupportedTraceError(
            f"{p} is not an OTF2 anchor file (expected the OTF2 header: 03, B or L, 'OTF2')"
        )
    return p


def read_otf2(path: str | Path) -> Trace:
    """Read an OTF2 trace.

    Parameters
    ----------
    path : str or Path
        The ``traces.otf2`` anchor or the directory holding it.

    Returns
    -------
    Trace
        With ``format="otf2"``.

    Raises
    ------
    TraceFormatError
        If the archive cannot be read or an event is inconsistent (naming the anchor,
        rank and 0-based event index on that location). libotf2 reads in a child
        process (:mod:`.child`): its crashes and messages stay there.
    """
    import otf2  # noqa: F401 - loaded here so that the reader child inherits it (~30 ms)

    anchor = find_otf2_anchor(path)

    def read(progress: Progress) -> Trace:
        return _read_in_process(anchor, progress)

    result = run_contained(read, [anchor], range(MAX_RANKS), reader="the OTF2 reader (libotf2)")
    trace: Trace = result.value
    failed = [ln for ln in result.stderr_lines if ln.startswith(_BINDING_FAILURE)]
    if failed:  # the bindings print an exception in a callback and stop reading early
        error = next((ln for ln in reversed(result.stderr_lines) if _EXCEPTION.match(ln)), "")
        raise TraceFormatError(
            f"cannot read OTF2 archive: an event callback failed ({error or 'no message'})",
            file=str(anchor),
        )
    notes = tuple(dict.fromkeys(f"libotf2: {ln[:200]}" for ln in result.stderr_lines[:4]))
    return replace(trace, notes=trace.notes + notes) if notes else trace


def _read_in_process(anchor: Path, progress: Progress | None) -> Trace:
    import otf2

    try:
        with otf2.reader.open(str(anchor)) as tr:
            rd = EventReader(anchor, tr.definitions)
            skipped = 0
            for loc, ev in tr.events:
                st = rd.locs.get(loc)
                if st is None:
                    skipped += 1
                    continue
                if progress is not None:
                    progress.at(st.rank, st.n_events)
                rd.event(st, ev)
    except TraceFormatError:
        raise
    except Exception as exc:  # the C library reports corrupt archives as generic errors
        raise TraceFormatError(
            f"cannot read OTF2 archive ({type(exc).__name__}: {exc})", file=str(anchor)
        ) from exc
    if skipped:
        rd.b.note(f"{skipped} event(s) on non-MPI locations ignored")
    return rd.finish()
