"""numba compilation without reference counting, for loops that allocate nothing.

Inside a compiled function, passing an array to an inlined helper or unpacking a
tuple of arrays updates the array's reference count with an atomic instruction;
in the event loop those updates were a tenth of the run time. A function compiled
with numba's (private, stable since 0.4x) ``_nrt=False`` option emits none; it must
then neither allocate arrays nor return new ones, which the loops decorated here
do not (their callers allocate).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numba as nb

F = TypeVar("F", bound=Callable[..., Any])


def njit_no_refcount(**options: Any) -> Callable[[F], F]:
    """``numba.njit(cache=True, _nrt=False, **options)``."""
    decorator: Callable[[F], F] = nb.njit(cache=True, _nrt=False, **options)  # type: ignore[call-overload]
    return decorator
