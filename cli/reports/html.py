"""Building blocks of the self-contained HTML reports (standard library only).

A report is one HTML file a person opens in any browser, prints or mails: figures are
inline (``data:image/png;base64``), styles are in the page, and nothing needs
JavaScript or the network. Every piece of text that comes from a result file is
escaped with :func:`html.escape`. The campaign, replay and what-if reports
(:mod:`mpiuq.reports.campaign`, :mod:`mpiuq.reports.replay`) assemble their pages from
these pieces; :func:`write_report` stores one atomically.
"""

from __future__ import annotations

import base64
import html
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from string import Template
from typing import Any

#: The page around a report: title, one-line subtitle, table of contents, body.
PAGE = Template(
    """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="mpiuq $version">
<title>$title</title>
<style>
$style
</style>
</head>
<body>
<header>
<h1>$title</h1>
<p class="subtitle">$subtitle</p>
</header>
<nav><strong>Contents</strong>$toc</nav>
<main>
$body
</main>
<footer>Written by mpiuq $version from the files in <code>$folder</code>.
Self-contained: figures are embedded; no scripts, no network.</footer>
</body>
</html>
"""
)

STYLE = """
:root { --ok: #1a7f37; --warn: #9a6700; --fail: #cf222e; --muted: #57606a;
        --line: #d0d7de; --head: #f6f8fa; }
* { box-sizing: border-box; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans",
       sans-serif; color: #1f2328; max-width: 1120px; margin: 0 auto; padding: 24px; }
header h1 { margin: 0 0 4px; font-size: 26px; }
.subtitle { margin: 0 0 16px; color: var(--muted); }
nav { border: 1px solid var(--line); border-radius: 6px; padding: 8px 14px;
      margin-bottom: 20px; background: var(--head); font-size: 14px; display: flex;
      flex-wrap: wrap; column-gap: 16px; }
nav a { color: #0969da; text-decoration: none; white-space: nowrap; }
h2 { border-bottom: 1px solid var(--line); padding-bottom: 4px; margin-top: 36px;
     font-size: 20px; }
h3 { font-size: 16px; margin: 22px 0 6px; }
p.note { color: var(--muted); font-size: 13.5px; margin: 4px 0 10px; }
table { border-collapse: collapse; margin: 8px 0 14px; font-size: 13.5px; max-width: 100%; }
th, td { border: 1px solid var(--line); padding: 4px 8px; vertical-align: top;
         text-align: left; }
th { background: var(--head); font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr:nth-child(even) td { background: #fbfcfd; }
code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12.5px;
       overflow-wrap: break-word; }
code.path { overflow-wrap: anywhere; }
.badge { display: inline-block; padding: 0 7px; border-radius: 10px; font-size: 12px;
         font-weight: 600; color: #fff; white-space: nowrap; }
.ok { background: var(--ok); } .warn { background: var(--warn); }
.fail { background: var(--fail); } .info { background: var(--muted); }
.verdict { border-radius: 6px; padding: 10px 14px; margin: 10px 0 18px; color: #fff;
           font-size: 15.5px; }
.verdict.ok { background: var(--ok); } .verdict.warn { background: var(--warn); }
.verdict.fail { background: var(--fail); }
figure { margin: 14px 0 26px; page-break-inside: avoid; }
figure img { max-width: 100%; height: auto; border: 1px solid var(--line); }
figcaption { color: var(--muted); font-size: 13.5px; margin-top: 4px; }
footer { margin-top: 40px; color: var(--muted); font-size: 12.5px;
         border-top: 1px solid var(--line); padding-top: 8px; }
@media print { body { max-width: none; padding: 0; font-size: 11pt; }
               nav { display: none; } h2 { page-break-after: avoid; } }
"""

#: Status of a check or file -> (badge text, CSS class).
STATUS = {
    "ok": ("ok", "ok"),
    "warning": ("warning", "warn"),
    "failed": ("FAILED", "fail"),
    "info": ("note", "info"),
}


def esc(value: object) -> str:
    """``value`` as text, HTML-escaped (quotes too)."""
    return html.escape(str(value), quote=True)


def badge(status: str, text: str | None = None) -> str:
    """A coloured label for a status of :data:`STATUS` (``"ok"``, ``"warning"``, ...)."""
    label, css = STATUS.get(status, (status, "info"))
    return f'<span class="badge {css}">{esc(text if text is not None else label)}</span>'


def number(value: object, digits: int = 4) -> str:
    """A number with ``digits`` significant digits; ``n/a`` for None or non-finite."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "n/a" if value is None else esc(value)
    if isinstance(value, int):
        return f"{value:,}".replace(",", "\u2009")
    if not math.isfinite(value):
        return "n/a"
    return f"{value:.{digits}g}"


def interval(value: object, digits: int = 4, spec: str | None = None) -> str:
    """A summary ``{"mean", "hdi90"}`` as ``mean [lo, hi]``, or a plain number.

    ``spec`` (e.g. ``".4f"``) formats the numbers instead of ``digits`` significant ones.
    """

    def fmt(x: object) -> str:
        if spec is not None and _is_number(x) and math.isfinite(float(x)):  # type: ignore[arg-type]
            return format(x, spec)
        return number(x, digits)

    if isinstance(value, Mapping) and "mean" in value:
        hdi = value.get("hdi90")
        if isinstance(hdi, Sequence) and len(hdi) == 2:
            return f"{fmt(value['mean'])} [{fmt(hdi[0])}, {fmt(hdi[1])}]"
        return fmt(value["mean"])
    return fmt(value)


def table(
    headers: Sequence[str], rows: Iterable[Sequence[object]], numeric: Iterable[int] = ()
) -> str:
    """An HTML table; cells are HTML already (use :func:`esc`/:func:`number` to make them).

    Parameters
    ----------
    headers
        Column titles (plain text, escaped here).
    rows
        Cells per row, as HTML.
    numeric
        Indices of the columns to right-align.
    """
    right = set(numeric)
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "\n".join(
        "<tr>"
        + "".join(
            f'<td class="num">{c}</td>' if i in right else f"<td>{c}</td>"
            for i, c in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>"


def key_values(pairs: Iterable[tuple[str, str]]) -> str:
    """A two-column table of ``(plain-text key, HTML value)``."""
    rows = "\n".join(f"<tr><th>{esc(k)}</th><td>{v}</td></tr>" for k, v in pairs)
    return f"<table>\n<tbody>\n{rows}\n</tbody>\n</table>"


def note(text: str) -> str:
    """A muted explanatory paragraph (``text`` is HTML)."""
    return f'<p class="note">{text}</p>'


def figure(path: Path, caption: str) -> str:
    """``path`` (PNG or SVG) embedded as a data URI, with a caption (HTML)."""
    kind = "image/svg+xml" if path.suffix.lower() == ".svg" else "image/png"
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return (
        f'<figure id="fig-{esc(path.stem)}"><img src="data:{kind};base64,{data}" '
        f'alt="{esc(path.name)}">\n<figcaption><strong>{esc(path.name)}</strong>: '
        f"{caption}</figcaption></figure>"
    )


def generic(value: Any, depth: int = 0) -> str:
    """Any JSON value as HTML: objects as key/value tables (nested ones as subtables),
    lists of objects with the same keys as one table, other lists as text.

    Used for result entries whose layout this module does not know (e.g. entries added
    by newer versions), so that they are shown rather than dropped.
    """
    if isinstance(value, Mapping):
        if not value:
            return "(none)"
        if depth >= 4:
            return f"<code>{esc(value)}</code>"
        if value and all(
            isinstance(v, Mapping) and "mean" in v and "hdi90" in v for v in value.values()
        ):
            return table(
                ["", "mean [90% HDI]", "sd"],
                ([esc(k), interval(v), number(v.get("sd"))] for k, v in value.items()),
                numeric=(1, 2),
            )
        return key_values((str(k), generic(v, depth + 1)) for k, v in value.items())
    if isinstance(value, list):
        if value and all(isinstance(v, Mapping) for v in value):
            keys = list(dict.fromkeys(k for v in value for k in v))
            if len(keys) <= 12 and depth < 4:
                return table(
                    keys,
                    ([_cell(v.get(k), depth) for k in keys] for v in value),
                    numeric=[i for i, k in enumerate(keys) if _is_number(value[0].get(k))],
                )
        if len(value) > 24:
            shown = ", ".join(_plain(v) for v in value[:24])
            return f"{esc(shown)}, ... ({len(value)} values)"
        return esc(", ".join(_plain(v) for v in value)) if value else "(none)"
    return _cell(value, depth)


def _cell(value: Any, depth: int) -> str:
    if isinstance(value, Mapping | list):
        return generic(value, depth + 1)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "n/a"
    if _is_number(value):
        return number(value)
    return esc(value)


def _plain(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def page(
    title: str,
    subtitle: str,
    sections: Sequence[tuple[str, str, str]],
    folder: Path,
    version: str,
) -> str:
    """The whole HTML document.

    Parameters
    ----------
    title, subtitle
        Plain text (escaped here).
    sections
        ``(anchor id, heading, HTML body)`` in order; each gets an ``<h2>`` and a
        table-of-contents link.
    folder
        The results folder the report describes (named in the footer).
    version
        mpiuq's version.
    """
    toc = "".join(f'<a href="#{esc(a)}">{esc(h)}</a>' for a, h, _ in sections)
    body = "\n".join(
        f'<section id="{esc(a)}">\n<h2>{esc(h)}</h2>\n{b}\n</section>' for a, h, b in sections
    )
    return PAGE.substitute(
        title=esc(title),
        subtitle=esc(subtitle),
        toc=toc,
        body=body,
        style=STYLE.strip(),
        folder=esc(folder),
        version=esc(version),
    )


def write_report(text: str, path: Path) -> Path:
    """Write ``text`` to ``path`` atomically (UTF-8); returns ``path``."""
    from mpiuq.surrogate.store.atomic_write import replace_atomically

    with replace_atomically(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return path
