"""The HTML reports of ``mpiuq replay`` and ``mpiuq whatif`` results (``--out DIR``).

Built from ``replay.json`` or ``whatif.json`` and the figure beside it: where the
application's time goes (compute, network, MPI stack, synchronisation) per network
model, or the speed-up of each what-if scenario with its posterior interval; which
calibration's parameters were used (the file read and its SHA-256 now); the trace and
the settings. Figures with draws read ``mean [90% HDI]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mpiuq.reports.html import esc, figure, generic, interval, key_values, note, number, page, table

#: The parts of the time, in the order of the tables: (JSON key, column title).
PARTS: tuple[tuple[str, str], ...] = (
    ("compute", "compute"),
    ("network", "network"),
    ("mpi_stack", "MPI stack"),
    ("sync", "sync"),
)

REPLAY_FIGURE_CAPTION = (
    "Time of all ranks split into compute, network, MPI stack and synchronisation, per "
    "network model (error bars: 90% HDI over the posterior draws, when draws were replayed)."
)
WHATIF_FIGURE_CAPTION = (
    "Left: speed-up of each scenario over the posterior draws (paired with the baseline "
    "draw by draw), 90% HDI and the 5% line. Right: which part of the rank-summed time "
    "moves, mean change with its 90% HDI."
)


def replay_report(folder: Path, data: Mapping[str, Any]) -> str:
    """The report of a ``replay.json`` (point replay or posterior draws) in ``folder``."""
    from mpiuq import __version__

    models: Mapping[str, Any] = data.get("models", {})
    sections = [
        (
            "time",
            "Where the time goes",
            _decomposition(models) + _figure(folder, "decomposition.png", REPLAY_FIGURE_CAPTION),
        ),
        ("calls", "Per MPI call", _per_call(models)),
        ("calibration", "Parameters used (hand-off)", _calibration(data)),
        ("trace", "Trace and settings", _trace(data)),
    ]
    trace = data.get("trace", {})
    return page(
        f"mpiuq replay report: {Path(str(trace.get('source', folder))).name}",
        _subtitle(data, f"{len(models)} network model(s)"),
        sections,
        folder,
        __version__,
    )


def whatif_report(folder: Path, data: Mapping[str, Any]) -> str:
    """The report of a ``whatif.json`` in ``folder``."""
    from mpiuq import __version__

    sections = [
        (
            "scenarios",
            "Would it help?",
            _scenarios(data) + _figure(folder, "whatif.png", WHATIF_FIGURE_CAPTION),
        ),
        (
            "baseline",
            "Baseline: where the time goes",
            _decomposition({str(data.get("model", "baseline")): data.get("baseline", {})}),
        ),
        ("calibration", "Parameters used (hand-off)", _calibration(data)),
        ("trace", "Trace and settings", _trace(data)),
    ]
    trace = data.get("trace", {})
    return page(
        f"mpiuq what-if report: {Path(str(trace.get('source', folder))).name}",
        _subtitle(
            data, f"{len(data.get('scenarios', {}))} scenario(s), model {data.get('model', '?')}"
        ),
        sections,
        folder,
        __version__,
    )


def _subtitle(data: Mapping[str, Any], what: str) -> str:
    t = data.get("trace", {})
    return (
        f"trace {t.get('source', '?')} ({t.get('format', '?')}, {t.get('ranks', '?')} ranks); "
        f"{what}; parameters: {_label(data.get('calibration', {}))}"
    )


def _label(c: Mapping[str, Any]) -> str:
    if c.get("draws"):
        return f"{c['draws']} posterior draws of {c.get('campaign') or c.get('source')}"
    if c.get("estimate"):
        return f"posterior {c['estimate']} of {c.get('campaign') or c.get('source')}"
    return "default parameters"


def _figure(folder: Path, name: str, caption: str) -> str:
    path = folder / name
    if not path.is_file():
        return note(f"{esc(name)} is not in the folder.")
    return figure(path, esc(caption))


def _decomposition(models: Mapping[str, Any]) -> str:
    rows = []
    for name, m in models.items():
        d = m.get("decomposition", {})
        share = m.get("share", {})
        total = sum(_mean(d.get(f"{k}_s")) for k, _ in PARTS)
        cells = []
        for k, _ in PARTS:
            part = d.get(f"{k}_s")
            frac = _mean(share.get(k)) if k in share else (_mean(part) / total if total else 0.0)
            cells.append(f"{interval(part)}<br>{frac:.1%}")
        rows.append([esc(name), interval(m.get("simulated_time_s")), *cells])
    return table(
        ["model", "run time s", *(f"{title} s (share)" for _, title in PARTS)],
        rows,
        (1, 2, 3, 4, 5),
    ) + note(
        "Run time: simulated wall time of the application. The parts are seconds summed "
        "over all ranks, each with its share of their sum."
    )


def _mean(value: object) -> float:
    if isinstance(value, Mapping):
        value = value.get("mean")
    return float(value) if isinstance(value, int | float) else 0.0


def _per_call(models: Mapping[str, Any]) -> str:
    out = []
    for name, m in models.items():
        calls = m.get("per_call", {})
        if not calls:
            continue
        out.append(f"<h3>{esc(name)}</h3>")
        out.append(
            table(
                ["call", *(f"{title} s" for _, title in PARTS)],
                (
                    [esc(c), *(interval(v.get(f"{k}_s")) for k, _ in PARTS)]
                    for c, v in calls.items()
                ),
                (1, 2, 3, 4),
            )
        )
    return "\n".join(out) or note("No per-call split in this result.")


def _scenarios(data: Mapping[str, Any]) -> str:
    rows = []
    for name, s in data.get("scenarios", {}).items():
        p = s.get("probability", {})
        moves = ", ".join(
            f"{title} {s.get('moves', {}).get(k, 0.0):.0%}"
            for k, title in PARTS
            if s.get("moves", {}).get(k, 0.0) >= 0.005
        )
        rows.append(
            [
                esc(name),
                f"<code>{esc(s.get('expression', ''))}</code>",
                interval(s.get("speedup"), spec=".4f"),
                f"{p.get('speedup>1.05', 0.0):.0%}",
                f"{p.get('speedup>1', 0.0):.0%}",
                interval(s.get("time_saved_s"), 3),
                esc(moves or "nothing moves"),
            ]
        )
    base = data.get("baseline", {})
    return (
        note(f"Baseline run time {interval(base.get('simulated_time_s'))} s.")
        + table(
            ["scenario", "change", "speed-up", "P(>5%)", "P(>0)", "run time saved s", "what moves"],
            rows,
            (2, 3, 4, 5),
        )
        + note(
            "Speed-up = baseline run time / scenario run time, draw by draw (the same "
            "posterior draw in both), mean [90% HDI]. P(>5%): share of draws faster by more "
            "than 5%. What moves: share of the rank-summed change per part of the time."
        )
    )


def _calibration(data: Mapping[str, Any]) -> str:
    from mpiuq.calibration.reporting.artefacts import file_sha256

    c: Mapping[str, Any] = data.get("calibration", {})
    rows = [("parameters", esc(_label(c)))]
    source = c.get("source")
    if source:
        path = Path(str(source))
        digest = file_sha256(path) if path.is_file() else None
        rows.append(("file read", f"<code>{esc(source)}</code>"))
        rows.append(
            (
                "its SHA-256 now",
                f"<code>{digest}</code>" if digest else esc("(not found from here)"),
            )
        )
    if c.get("seed") is not None and c.get("draws"):
        rows.append(("seed of the pick of draws", esc(c["seed"])))
    if c.get("overrides"):
        rows.append(("--param overrides", generic(c["overrides"])))
    out = [key_values(rows)]
    params = data.get("params")
    if isinstance(params, Mapping) and params:
        out.append("<h3>Parameter values</h3>")
        out.append(generic(params))
    return "\n".join(out)


def _trace(data: Mapping[str, Any]) -> str:
    t = dict(data.get("trace", {}))
    notes = t.pop("notes", [])
    out = [generic(t), "<h3>Settings</h3>", generic(data.get("settings", {}))]
    if notes:
        out.append("<h3>Notes from the reader</h3>")
        out.append("<ul>" + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
    extra = {
        k: v
        for k, v in data.items()
        if k in ("lowering_s", "wall_s", "congestion_network_s") and v is not None
    }
    if extra:
        out.append("<h3>Timing</h3>" + key_values((k, number(v, 4)) for k, v in extra.items()))
    return "\n".join(out)
