"""Read a text input file whole, with decoding errors located by line.

Readers of CSV and similar files decode the whole file first (its size is checked
against the memory budget before), so a byte that is not UTF-8 is reported with its
line and byte offset instead of the position within some internal read buffer.
:func:`other_separator` tells a CSV reader that a file uses another separator than the
comma (a spreadsheet saving "CSV" in a locale whose decimal mark is the comma).
"""

from __future__ import annotations

import re
import stat
from pathlib import Path

from mpiuq.surrogate.budget import check_memory

#: Control characters a text table never holds (tab, newline, carriage return allowed).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def not_a_file(path: Path) -> str | None:
    """Why ``path`` is not a regular file to read (``"does not exist"``, ``"is a folder"``,
    ``"is a character device ..."``), or None. A device or FIFO is never opened (reading
    ``/dev/zero`` never ends, opening a FIFO waits for a writer)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return "does not exist"
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    if stat.S_ISDIR(mode):
        return "is a folder"
    if not stat.S_ISREG(mode):
        kind = (
            "a character device"
            if stat.S_ISCHR(mode)
            else "a block device"
            if stat.S_ISBLK(mode)
            else "a FIFO (named pipe)"
            if stat.S_ISFIFO(mode)
            else "a socket"
            if stat.S_ISSOCK(mode)
            else "not a regular file"
        )
        return f"is {kind}, not a regular file"
    return None


def shown_line(line: str, limit: int = 120) -> str:
    """A first line for an error message: itself (cut) when it looks like a CSV header
    (printable, with a comma), else only its length: the contents of a file that is not a
    CSV table (``/proc/self/environ``, a key file) are never echoed."""
    if "," in line and line.isprintable():
        return repr(line if len(line) <= limit else line[: limit - 3] + "...")
    return f"(a line of {len(line)} characters that is no CSV header; not shown)"


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
    bad = _CONTROL.search(text)
    if bad is not None:
        line = text.count("\n", 0, bad.start()) + 1
        return None, f"not a text table (control byte {bad.group()!r} at line {line})"
    return text.removeprefix("\ufeff"), ""


#: Field separators other than the comma that spreadsheets write into "CSV" files.
OTHER_SEPARATORS: dict[str, str] = {";": "semicolon", "\t": "tab", "|": "vertical bar"}


def other_separator(line: str) -> str | None:
    """How a CSV line without commas separates its fields, if it does: e.g.
    ``"';' (semicolon)"`` for ``"run;msg_size_bytes;value"``; None for a line with a
    comma or no separator of :data:`OTHER_SEPARATORS`.

    Examples
    --------
    >>> other_separator("run;msg_size_bytes;value")
    "';' (semicolon)"
    >>> other_separator("run,msg_size_bytes") is None
    True
    """
    if "," in line:
        return None
    counts = {sep: line.count(sep) for sep in OTHER_SEPARATORS}
    sep = max(counts, key=lambda k: counts[k])
    if counts[sep] == 0:
        return None
    shown = "\\t" if sep == "\t" else sep
    return f"'{shown}' ({OTHER_SEPARATORS[sep]})"
