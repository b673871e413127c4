"""The OTF2 reader (:mod:`.reader`, ``read_otf2``), with the official ``otf2`` bindings in
a contained child process.

Nothing is imported with the package: the bindings are loaded only to read.
"""
