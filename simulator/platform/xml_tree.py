"""A platform file as a tree of elements that remember their line (the stdlib's expat).

:func:`parse_xml` reads the whole file; malformed XML becomes a :class:`PlatformError`
naming the file, line and expat's reason. No external entity or DTD is fetched (the
``<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">`` of platform files is
read as a declaration only).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from xml.parsers import expat

from mpiuq.simulator.platform.errors import PlatformError

#: Largest platform file read, bytes.
MAX_PLATFORM_BYTES = 64 << 20


@dataclass
class XmlElement:
    """One element: its tag, attributes, 1-based line and children, in file order."""

    tag: str
    attrs: dict[str, str]
    line: int
    children: list[XmlElement] = field(default_factory=list)

    @property
    def label(self) -> str:
        """``<tag id="...">`` (the id when there is one), for messages."""
        ident = self.attrs.get("id")
        return f'<{self.tag} id="{ident}">' if ident is not None else f"<{self.tag}>"


def parse_xml(path: Path) -> XmlElement:
    """The root element of the XML file ``path``.

    Raises
    ------
    PlatformError
        If the file cannot be read, is too large, or is not well-formed XML.
    """
    try:
        size = path.stat().st_size
        if size > MAX_PLATFORM_BYTES:
            raise PlatformError(
                str(path), f"{size} bytes: expected a platform file of at most {MAX_PLATFORM_BYTES}"
            )
        data = path.read_bytes()
    except OSError as exc:
        raise PlatformError(str(path), f"cannot be read ({exc.strerror or exc})") from None
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    stack: list[XmlElement] = []
    roots: list[XmlElement] = []

    def start(tag: str, attrs: dict[str, str]) -> None:
        element = XmlElement(tag, dict(attrs), parser.CurrentLineNumber)
        (stack[-1].children if stack else roots).append(element)
        stack.append(element)

    def end(_tag: str) -> None:
        stack.pop()

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    try:
        parser.Parse(data, True)
    except expat.ExpatError as exc:
        raise PlatformError(
            str(path), f"malformed XML: {expat.errors.messages[exc.code]}", line=exc.lineno
        ) from None
    if not roots:
        raise PlatformError(str(path), "no XML element: expected <platform>")
    return roots[0]
