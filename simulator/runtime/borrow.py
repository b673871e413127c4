"""Borrowed arrays: a compiled loop's bundles of arrays without numba's reference counts.

numba counts references to every array a compiled function holds (its ``meminfo``,
the record of the array's owner): handing a bundle -- a named tuple of arrays, nested --
to an inlined helper, unpacking it or reading a field updates the count of each array
inside with an atomic instruction, and numba's pruning pass cannot remove the updates
in a loop's body that has many helpers. :func:`borrowed` gives a loop the same arrays
without an owner record, as :func:`numba.carray` does for foreign memory: numba's
pruning pass deletes the updates of a null owner, so a loop that borrows its bundles
on entry has no reference counting left in its body. Built with numba's public
extension API (:func:`numba.extending.intrinsic`).

The owner is the caller: a loop's arguments stay alive during the call, so borrowed
views of them are safe inside it; a loop must not return a borrowed array or keep
one beyond the call (the loops that borrow return numbers or nothing).

This file is one of the compiled sources (:data:`~mpiuq.simulator.runtime.sources.COMPILED_SOURCES`):
what it generates is in every loop that borrows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from mpiuq.simulator.runtime.jit import intrinsic

__all__ = ["borrowed"]

_T = TypeVar("_T")


def _members(ty: Any) -> list[Any]:
    """The member types of a numba tuple type."""
    return list(ty)


def _borrowable(ty: Any) -> bool:
    """Whether :func:`_borrowed` takes a value of numba type ``ty``: an array, a number,
    a boolean, or a (named) tuple of these, nested at will."""
    from numba.core import types

    if isinstance(ty, types.Array):
        return True
    if isinstance(ty, types.BaseTuple):
        return all(_borrowable(t) for t in _members(ty))
    return isinstance(ty, (types.Number, types.Boolean))


def _borrow(context: Any, builder: Any, ty: Any, value: Any) -> Any:
    """The LLVM value of ``value`` (numba type ``ty``) with every array's memory-info
    pointer set to null (:func:`_borrowed`)."""
    from numba.core import types

    if isinstance(ty, types.Array):
        array = context.make_array(ty)(context, builder, value=value)
        array.meminfo = context.get_constant_null(types.MemInfoPointer(types.voidptr))
        return array._getvalue()
    if isinstance(ty, types.BaseTuple):
        for i, item in enumerate(_members(ty)):
            part = _borrow(context, builder, item, builder.extract_value(value, i))
            value = builder.insert_value(value, part, i)
    return value


@intrinsic
def _borrowed(typingctx: Any, bundle: Any) -> Any:
    """``bundle`` (an array, or a tuple or named tuple of arrays and scalars, nested)
    with its arrays *borrowed*: the same data, shapes and strides, but no owner record
    (numba's ``meminfo``); see the module's docstring. Compiled code only.

    Raises
    ------
    numba.core.errors.TypingError
        At compile time, for a bundle holding anything but arrays, numbers, booleans
        and tuples of them.
    """
    from numba.core.errors import TypingError

    if not _borrowable(bundle):
        raise TypingError(f"borrowed: expected arrays, scalars or tuples of them, got {bundle}")

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return _borrow(context, builder, signature.args[0], args[0])

    return bundle(bundle), codegen


if TYPE_CHECKING:

    def borrowed(bundle: _T) -> _T:
        """``bundle`` with its arrays borrowed (:func:`_borrowed`, as compiled code sees it)."""
        ...

else:
    borrowed = _borrowed
