"""Storage of surrogates and designs: HDF5 files with checksums and journals, atomic
writes, and strict text and JSON input."""
