"""Raw extraction of DUMPI per-rank files with pydumpi (no interpretation).

pydumpi drives libundumpi through ctypes callbacks: arrays in the callback
arguments point into library buffers, so they are copied at once, and an
exception in a callback would make pydumpi print it and call ``sys.exit(1)``, so
every callback is wrapped and the first exception is re-raised after the stream.
libundumpi dereferences the trailing index of a file without checking it and
crashes on truncated files, so :func:`check_dumpi_file` validates the magic
numbers and the index offsets before the library sees the file; other corruption
can still crash it, so it only runs in a child process (:mod:`.child`).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mpiuq.simulator.trace.child import Progress
from mpiuq.simulator.trace.errors import TraceFormatError

__all__ = ["RawCall", "RawRank", "check_dumpi_file", "read_dumpi_rank"]

_MAGIC = b"\xff\xaa\xddDUMPI"
_INDEX_ENTRIES = 7
_INDEX_BYTES = len(_MAGIC) + 8 * _INDEX_ENTRIES


@dataclass(frozen=True, slots=True)
class RawCall:
    """One MPI call as recorded: name, wall and CPU entry/exit times (s), arguments."""

    name: str
    index: int
    wall_start: float
    wall_stop: float
    cpu_start: float
    cpu_stop: float
    args: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class RawRank:
    """Every handled call of one rank file, the datatype sizes and the other calls' counts.

    ``other`` counts the records of MPI functions without an extractor in ``HANDLERS``
    (counted from the stream: the footer counts of some real traces disagree with it).
    """

    file: str
    calls: list[RawCall]
    type_sizes: tuple[int, ...]
    other: dict[str, int]
    n_records: int


def check_dumpi_file(path: Path) -> None:
    """Validate the leading magic and the trailing index of a DUMPI binary file.

    Raises
    ------
    TraceFormatError
        If the file is too short, lacks the DUMPI magic or its index points outside
        the file (the usual sign of a truncated copy).
    """
    try:
        size = path.stat().st_size
        with path.open("rb") as fh:
            head = fh.read(len(_MAGIC))
            if size >= _INDEX_BYTES:
                fh.seek(size - _INDEX_BYTES)
                tail = fh.read(_INDEX_BYTES)
            else:
                tail = b""
    except OSError as exc:
        raise TraceFormatError(f"cannot read DUMPI file ({exc})", file=str(path)) from exc
    if head != _MAGIC:
        raise TraceFormatError(
            f"not a DUMPI file: first bytes {head!r}, expected the magic {_MAGIC!r}",
            file=str(path),
            record=0,
        )
    if len(tail) != _INDEX_BYTES or tail[: len(_MAGIC)] != _MAGIC:
        raise TraceFormatError(
            f"truncated or corrupt DUMPI file ({size} bytes): no index record with the DUMPI "
            f"magic in its last {_INDEX_BYTES} bytes",
            file=str(path),
        )
    offsets = struct.unpack(">" + "q" * _INDEX_ENTRIES, tail[len(_MAGIC) :])
    limit = size - _INDEX_BYTES
    for k, off in enumerate(offsets):
        if off < 0 or off > limit:
            raise TraceFormatError(
                f"corrupt DUMPI index: entry {k} points to byte {off}, outside 0..{limit}",
                file=str(path),
            )


def _arr(ptr: Any, n: int) -> tuple[int, ...]:
    if not ptr or n <= 0:
        return ()
    return tuple(int(ptr[i]) for i in range(n))


def _make_handlers() -> dict[str, Callable[[Any], tuple[Any, ...]]]:
    """Argument extractors per pydumpi callback name (without the ``on_`` prefix)."""
    return {
        **_p2p_handlers(),
        **_completion_handlers(),
        **_collective_handlers(),
        **_setup_handlers(),
    }


def _p2p_handlers() -> dict[str, Callable[[Any], tuple[Any, ...]]]:
    """Sends, receives and sendrecvs: counts, datatypes, peer, tags, communicator."""

    def send(d: Any) -> tuple[Any, ...]:
        return (d.count, d.datatype, d.dest, d.tag, d.comm)

    def isend(d: Any) -> tuple[Any, ...]:
        return (d.count, d.datatype, d.dest, d.tag, d.comm, d.request)

    def recv(d: Any) -> tuple[Any, ...]:
        return (d.count, d.datatype, d.source, d.tag, d.comm)

    def irecv(d: Any) -> tuple[Any, ...]:
        return (d.count, d.datatype, d.source, d.tag, d.comm, d.request)

    return {
        "send": send,
        "bsend": send,
        "ssend": send,
        "rsend": send,
        "isend": isend,
        "ibsend": isend,
        "issend": isend,
        "irsend": isend,
        "recv": recv,
        "irecv": irecv,
        "sendrecv": lambda d: (
            d.sendcount,
            d.sendtype,
            d.dest,
            d.sendtag,
            d.recvcount,
            d.recvtype,
            d.source,
            d.recvtag,
            d.comm,
        ),
        "sendrecv_replace": lambda d: (
            d.count,
            d.datatype,
            d.dest,
            d.sendtag,
            d.count,
            d.datatype,
            d.source,
            d.recvtag,
            d.comm,
        ),
    }


def _reqs(d: Any) -> tuple[int, ...]:
    return _arr(d.requests, d.count)


def _completion_handlers() -> dict[str, Callable[[Any], tuple[Any, ...]]]:
    """Waits and tests: their requests, flags and picked indices."""
    return {
        "wait": lambda d: (d.request,),
        "test": lambda d: (d.request, d.flag),
        "waitall": lambda d: (_reqs(d),),
        "testall": lambda d: (_reqs(d), d.flag),
        "waitany": lambda d: (_reqs(d), d.index),
        "testany": lambda d: (_reqs(d), d.index, d.flag),
        "waitsome": lambda d: (_reqs(d), _arr(d.indices, d.outcount)),
        "testsome": lambda d: (_reqs(d), _arr(d.indices, d.outcount)),
    }


def _collective_handlers() -> dict[str, Callable[[Any], tuple[Any, ...]]]:
    """Collectives: counts (per rank for the v-collectives), datatypes, root, communicator."""
    return {
        "barrier": lambda d: (d.comm,),
        "bcast": lambda d: (d.count, d.datatype, d.root, d.comm),
        "reduce": lambda d: (d.count, d.datatype, d.root, d.comm),
        "allreduce": lambda d: (d.count, d.datatype, d.comm),
        "scan": lambda d: (d.count, d.datatype, d.comm),
        "exscan": lambda d: (d.count, d.datatype, d.comm),
        "gather": lambda d: (d.sendcount, d.sendtype, d.recvcount, d.recvtype, d.root, d.comm),
        "scatter": lambda d: (d.sendcount, d.sendtype, d.recvcount, d.recvtype, d.root, d.comm),
        "allgather": lambda d: (d.sendcount, d.sendtype, d.recvcount, d.recvtype, d.comm),
        "alltoall": lambda d: (d.sendcount, d.sendtype, d.recvcount, d.recvtype, d.comm),
        "gatherv": lambda d: (
            d.sendcount,
            d.sendtype,
            _arr(d.recvcounts, d.commsize),
            d.recvtype,
            d.root,
            d.comm,
            d.commsize,
        ),
        "scatterv": lambda d: (
            _arr(d.sendcounts, d.commsize),
            d.sendtype,
            d.recvcount,
            d.recvtype,
            d.root,
            d.comm,
            d.commsize,
        ),
        "allgatherv": lambda d: (
            d.sendcount,
            d.sendtype,
            _arr(d.recvcounts, d.commsize),
            d.recvtype,
            d.comm,
            d.commsize,
        ),
        "alltoallv": lambda d: (
            _arr(d.sendcounts, d.commsize),
            d.sendtype,
            _arr(d.recvcounts, d.commsize),
            d.recvtype,
            d.comm,
            d.commsize,
        ),
        "reduce_scatter": lambda d: (
            _arr(d.recvcounts, d.commsize),
            d.datatype,
            d.comm,
            d.commsize,
        ),
    }


def _setup_handlers() -> dict[str, Callable[[Any], tuple[Any, ...]]]:
    """Communicators, groups, ranks and sizes, init and finalize."""
    return {
        "comm_split": lambda d: (d.oldcomm, d.color, d.key, d.newcomm),
        "comm_dup": lambda d: (d.oldcomm, d.newcomm),
        "comm_create": lambda d: (d.oldcomm, d.group, d.newcomm),
        "comm_free": lambda d: (d.comm,),
        "comm_group": lambda d: (d.comm, d.group),
        "group_incl": lambda d: (d.group, _arr(d.ranks, d.count), d.newgroup),
        "group_excl": lambda d: (d.group, _arr(d.ranks, d.count), d.newgroup),
        "group_free": lambda d: (),
        "comm_rank": lambda d: (d.comm, d.rank),
        "comm_size": lambda d: (d.comm, d.size),
        "init": lambda d: (),
        "init_thread": lambda d: (),
        "finalize": lambda d: (),
    }


HANDLERS = _make_handlers()


def _reader_class() -> type:
    from pydumpi import DumpiTrace  # imported lazily: loads libundumpi

    def make_cb(name: str, extract: Callable[[Any], tuple[Any, ...]]) -> Callable[..., None]:
        def cb(self: Any, data: Any, thread: Any, cpu: Any, wall: Any, perf: Any) -> None:
            index = self.n_records
            self.n_records += 1
            if self.progress is not None:
                self.progress.record(index)
            if self.error is not None:
                return
            try:
                self.calls.append(
                    RawCall(
                        name,
                        index,
                        wall.start.sec + wall.start.nsec * 1e-9,
                        wall.stop.sec + wall.stop.nsec * 1e-9,
                        cpu.start.sec + cpu.start.nsec * 1e-9,
                        cpu.stop.sec + cpu.stop.nsec * 1e-9,
                        extract(data),
                    )
                )
            except Exception as exc:  # stored and re-raised after the stream (see module doc)
                self.error = (index, exc)

        cb.__name__ = f"on_{name}"
        return cb

    def make_counter(name: str) -> Callable[..., None]:
        def cb(self: Any, data: Any, thread: Any, cpu: Any, wall: Any, perf: Any) -> None:
            if self.progress is not None:
                self.progress.record(self.n_records)
            self.n_records += 1
            self.other[name] = self.other.get(name, 0) + 1

        cb.__name__ = f"on_{name}"
        return cb

    from pydumpi.callbacks import DumpiCallbacks

    namespace: dict[str, Any] = {}
    for field_name, _ctype in DumpiCallbacks._fields_:
        short = field_name[3:]
        if short in ("function_enter", "function_exit"):
            continue
        extract = HANDLERS.get(short)
        namespace[field_name] = (
            make_cb(short, extract) if extract is not None else make_counter(short)
        )

    def __init__(self: Any, path: str, progress: Any = None) -> None:
        self.calls = []
        self.other = {}
        self.n_records = 0
        self.error = None
        self.progress = progress
        DumpiTrace.__init__(self, path)

    namespace["__init__"] = __init__
    return type("_RankReader", (DumpiTrace,), namespace)


_READER: type | None = None


def prepare_reader() -> type:
    """Load libundumpi and build the callback class now (before forking a reader child,
    so that every child inherits them instead of building them again: ~30 ms)."""
    global _READER
    if _READER is None:
        _READER = _reader_class()
    return _READER


def read_dumpi_rank(path: Path, progress: Progress | None = None) -> RawRank:
    """Read every handled call of one DUMPI rank file (with the C library: see below).

    Call it only where libundumpi may crash the process, i.e. in the child of
    :func:`~.child.run_contained`; ``progress`` then records where it is.

    Raises
    ------
    TraceFormatError
        If the file fails :func:`check_dumpi_file` or a record cannot be decoded.
    """
    check_dumpi_file(path)
    reader = prepare_reader()(str(path), progress)
    reader.open()
    if progress is not None:
        progress.streaming()
    try:
        sizes = tuple(int(s) for s in reader.type_sizes)
        reader.read_stream()
    finally:
        reader.close()
    if reader.error is not None:
        index, exc = reader.error
        raise TraceFormatError(f"cannot decode record ({exc!r})", file=str(path), record=index)
    return RawRank(str(path), reader.calls, sizes, dict(reader.other), reader.n_records)
