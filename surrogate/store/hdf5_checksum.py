"""A checksum of a whole HDF5 file in its user block, checked before the HDF5 library reads it.

The HDF5 library can loop forever or crash on a damaged file (a fuzzed surrogate file
hung inside ``H5Aread``).  mpiuq writes its HDF5 files whole (:mod:`atomic_write`), so it
can sign them: files are created with a 512-byte *user block*, which HDF5 leaves to the
application, and once the file is closed the user block receives :data:`MAGIC` and the
SHA-256 of everything after it.  :func:`verify` recomputes that digest before any HDF5
call, so a damaged file is refused in Python with a clear message and never reaches the
C library.  A file without a user block (an HDF5 file of another program, or of an mpiuq
older than the checksums) cannot be verified and is refused too: every part of a stored
file is checked, or it is not used.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

#: Size of the user block reserved at the start of signed files (HDF5 needs a power of 2 >= 512).
USERBLOCK_BYTES = 512
MAGIC = b"MPIUQ-HDF5-SHA256-1\n"
#: The HDF5 format signature (at offset 0, or at the end of a user block).
HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"


def _digest_after_userblock(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        f.seek(USERBLOCK_BYTES)
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def sign(path: Path) -> None:
    """Write the magic and the digest into the user block of a closed file.

    The file must have been created with ``h5py.File(..., userblock_size=USERBLOCK_BYTES)``.
    """
    stamp = MAGIC + _digest_after_userblock(path).encode("ascii") + b"\n"
    with path.open("r+b") as f:
        f.write(stamp.ljust(USERBLOCK_BYTES, b"\0"))


def verify(path: Path) -> str | None:
    """Why a signed file cannot be trusted, or None if it can be handed to the HDF5 library.

    Every file must carry a matching digest; one that starts with the HDF5 signature
    (no user block: not written by this version of mpiuq) cannot be verified.
    """
    with path.open("rb") as f:
        head = f.read(USERBLOCK_BYTES + len(HDF5_SIGNATURE))
    if head.startswith(HDF5_SIGNATURE):
        return "it has no checksum (an HDF5 file not written by this version of mpiuq)"
    if not head.startswith(MAGIC):
        if head[USERBLOCK_BYTES:].startswith(HDF5_SIGNATURE):
            return "its checksum block is damaged"
        return "it is not an HDF5 file"
    stored = head[len(MAGIC) : len(MAGIC) + 64].decode("ascii", "replace")
    if len(head) < USERBLOCK_BYTES or stored != _digest_after_userblock(path):
        return "its content does not match its checksum (damaged or truncated)"
    return None
