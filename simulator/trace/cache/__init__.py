"""mpiuq's own HDF5 trace files and the parse-once cache: the file format's version
(:mod:`.h5_format`), writing a trace and the cache keys (:mod:`.store`), reading a file
(:mod:`.h5_reader`) and the cache entries' h5py-free memory-mapped layout (:mod:`.layout`).

Nothing is imported with the package: h5py is loaded only to read or write a file.
"""
