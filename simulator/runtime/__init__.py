"""numba behind one module, and what runs the compiled loops.

* :mod:`.jit` -- ``njit`` (``numba.njit(cache=True, nogil=True)``, public API only), the
  list of loops, stale caches dropped when any compiled source changes, compile
  announcements;
* :mod:`.sources` -- the compiled source files and their digest (no numba, no NumPy);
* :mod:`.numba_import` -- numba imported without its SciPy/PyYAML probes;
* :mod:`.borrow` -- a loop's bundles of arrays without numba's reference counts;
* :mod:`.prefetch` -- the cache prefetch intrinsic;
* :mod:`.watch` -- compiled loops run in worker threads, with progress.

The package imports nothing: import the module you need.
"""
