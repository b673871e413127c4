"""Allow ``python -m mpiuq``.

Ctrl-C is one line and exit 130 from this file's first statement: until
:mod:`mpiuq.console` is loaded (a fraction of a millisecond) and puts its own handler in
place, a handler of built-in modules only says the same without the command's name.
"""

import _signal
import os


def _interrupted(signum: int, frame: object) -> None:
    try:
        os.write(2, b"mpiuq: interrupted\n")
    finally:
        os._exit(130)


_signal.signal(_signal.SIGINT, _interrupted)

from mpiuq.console import run  # noqa: E402  (after the handler)

run()
