"""The version of mpiuq's own trace file format (HDF5 trace files and the parse cache).

Kept apart from the reader so that the cache's keys and its h5py-free reads
(:mod:`.cache.layout`) need neither h5py nor the reader.
"""

from __future__ import annotations

__all__ = ["FORMAT_VERSION"]

#: Bump when a reader or the representation changes meaning (invalidates caches).
FORMAT_VERSION = 1
