"""Read a text input file whole, with decoding errors located by line.

Readers of CSV and similar files decode the whole file first (its size is checked
against the memory budget before), so a byte that is not UTF-8 is reported with its
line and byte offset instead of the position within some internal read buffer.
"""

from __future__ import annotations

from pathlib import Path

from mpiuq.surrogate.budget import check_memory

#: Memory of the parsed content per byte of text (lists of Python strings), bytes.
BYTES_PER_TEXT_BYTE = 24


def read_text(path: Path) -> tuple[str | None, str]:
    """``(text, "")`` of a UTF-8 file (a leading byte-order mark dropped), or ``(None, why)``.

    ``why`` reads like ``"not UTF-8 text (invalid start byte at line 12, byte 345)"``.

    Raises
    ------
    BudgetError
        If parsing the file would need more memory than the budget.
    OSError
        If the file cannot be read.
    """
    check_memory(
        f"reading {path}",
        BYTES_PER_TEXT_BYTE * path.stat().st_size,
        "the parsed cells of the file",
    )
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return None, f"not UTF-8 text ({exc.reason} at line {line}, byte {exc.start})"
    return text.removeprefix("\ufeff"), ""
