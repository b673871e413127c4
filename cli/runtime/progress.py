"""Progress lines of long ``mpiuq`` commands, on stderr (``--quiet`` silences them).

The numerics never print: they take an optional callback (a fraction done, or a
stage's figures) and this module turns the calls into lines. On a terminal a running
stage rewrites its own line; otherwise (a log file, a pipe) it prints a line at most
every :data:`LOG_INTERVAL_S` seconds, so logs stay short.

The install compiles the numba loops into numba's cache. A loop that is not there
(a changed simulator source, another CPU) compiles on its first use, and is cached
as soon as it is compiled; :meth:`Progress.compiling` says which loop, the seconds
elapsed and how long it took the last time it was compiled here.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

#: Seconds between two progress lines of one stage when stderr is not a terminal.
LOG_INTERVAL_S = 10.0
#: Seconds between two rewrites of a stage's line on a terminal.
TTY_INTERVAL_S = 0.5
#: Seconds between two "still compiling" lines of one loop.
COMPILE_TICK_S = 10.0


def add_quiet_argument(parser: argparse.ArgumentParser, default: Any = argparse.SUPPRESS) -> None:
    """Add ``-q/--quiet`` to ``parser``.

    The top-level parser sets ``default=False``; a sub-command keeps the default
    ``SUPPRESS`` so that ``mpiuq --quiet replay ...`` and ``mpiuq replay ... --quiet``
    both work (a sub-command's own default would otherwise overwrite the top-level flag).
    """
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        default=default,
        help="no progress lines on stderr",
    )


class Progress:
    """Progress lines of one command on ``stream`` (stderr), or nothing when ``quiet``."""

    def __init__(self, quiet: bool = False, stream: TextIO | None = None) -> None:
        self.quiet = quiet
        self.stream = sys.stderr if stream is None else stream
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._open_line = False
        self._compile_ticker: object | None = None

    @classmethod
    def of(cls, args: argparse.Namespace) -> Progress:
        """The progress of a parsed command line (``args.quiet``)."""
        return cls(quiet=bool(getattr(args, "quiet", False)))

    def line(self, text: str) -> None:
        """Print one finished line."""
        if self.quiet:
            return
        self._end_open_line()
        print(text, file=self.stream, flush=True)

    def _rewrite(self, text: str) -> None:
        print(f"\r{text}\x1b[K", end="", file=self.stream, flush=True)
        self._open_line = True

    def _end_open_line(self) -> None:
        if self._open_line:
            print(file=self.stream, flush=True)
            self._open_line = False

    def begin(self, label: str) -> None:
        """Show ``label ...`` on a terminal while a stage runs (logs get its end line only)."""
        if not self.quiet and self.tty:
            self._rewrite(f"{label} ...")

    @contextmanager
    def stage(self, label: str) -> Iterator[Callable[[str], None]]:
        """Time a stage: ``label ...`` when it starts, ``label: DETAILS (N s)`` when it ends.

        Yields a function that sets the details shown at the end (e.g. a count).
        """
        details: list[str] = []
        self.begin(label)
        start = time.perf_counter()
        yield details.append
        took = time.perf_counter() - start
        text = f"{label}: {details[-1]} ({took:.2f} s)" if details else f"{label} ({took:.2f} s)"
        self.line(text)

    def fraction(self, label: str) -> Callable[[float], None]:
        """A callback ``f(done)`` (``done`` in [0, 1]) showing ``label NN% (N s)``."""
        start = time.perf_counter()
        last = [-1e9]

        def report(done: float) -> None:
            if self.quiet:
                return
            now = time.perf_counter()
            interval = TTY_INTERVAL_S if self.tty else LOG_INTERVAL_S
            if now - last[0] < interval:
                return
            last[0] = now
            text = f"{label} {done:6.1%} ({now - start:.0f} s)"
            if self.tty:
                self._rewrite(text)
            else:
                self.line(text)

        return report

    def compiling(self, loop: str, took_s: float | None) -> None:
        """Say that ``loop`` starts compiling (``took_s`` ``None``) or was compiled and
        cached (``took_s`` seconds); while it compiles, a line every
        :data:`COMPILE_TICK_S` seconds says how long it has been going."""
        if self.quiet:
            return
        if took_s is not None:
            self._compile_ticker = None
            self.line(f"compiled {loop} in {took_s:.0f} s (cached: not compiled again)")
            return
        from mpiuq.simulator.runtime.jit import last_compile_s

        before = last_compile_s(loop)
        hint = (
            f"it took {before:.0f} s when last compiled here"
            if before is not None
            else "the largest loops take a minute or more on an idle 2-core machine"
        )
        expect = f" of about {before:.0f} s" if before is not None else ""
        self.line(f"compiling {loop} (not in numba's cache: {hint})")
        ticker = object()
        self._compile_ticker = ticker
        start = time.perf_counter()

        def tick() -> None:
            while True:
                time.sleep(COMPILE_TICK_S)
                if self._compile_ticker is not ticker:
                    return
                self.line(f"still compiling {loop}: {time.perf_counter() - start:.0f} s{expect}")

        import threading

        threading.Thread(target=tick, name="compile-ticker", daemon=True).start()

    @contextmanager
    def watching_compilation(self) -> Iterator[None]:
        """Announce (:meth:`compiling`) every numba compilation inside the block."""
        if self.quiet:
            yield
            return
        from mpiuq.simulator.runtime.jit import on_compile

        try:
            with on_compile(self.compiling):
                yield
        finally:
            self._compile_ticker = None
        self._end_open_line()
