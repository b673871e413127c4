"""The calibration hand-off: one versioned, typed record of what replay and what-if take.

A finished campaign hands the simulator its calibrated parameters (``replay``, ``whatif``,
``simulate --params results/<campaign>``). Everything the hand-off carries is one
:class:`Handoff` record, stored as the ``handoff`` table of the folder's ``summary.json``
(written atomically, last, after the posterior files it lists):

* the campaign's identity: its name and run fingerprint (the summary's ``run``);
* the point estimates of every calibrated parameter (median, mean, MAP when unique);
* the fixed simulator values and the **regime table with its names**, so the parameters
  are rebuilt as calibrated (a table rebuilt from ``regime<k>_*`` slots alone lost its
  names: two mailbox regimes were both "small", and refused);
* the posterior files (``posterior.nc``, ``posterior_draws.nc``) with their sizes and
  SHA-256.

:func:`verified_handoff` reads and checks it as a unit: the summary's format version,
the record's version and types, the campaign identity against the summary, every
value against the simulator's range check, and the files it will read against their
sizes and SHA-256. No folder state skips the check: a summary without a record (an
older mpiuq), a draws file the record does not list, a file of another run or a summary
of another campaign beside the files are refused with a
:class:`~mpiuq.calibration.reporting.calibrated.CalibratedParametersError` naming the file.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mpiuq.calibration.config.limits import check_parameter_value
from mpiuq.calibration.errors import CalibrationError
from mpiuq.simulator.errors import ParameterError
from mpiuq.simulator.parameters import SimParams
from mpiuq.simulator.regimes import (
    DEFAULT_NAMES,
    PROTOCOLS,
    SLOT_ALIASES,
    SLOTS,
    Regime,
    is_default_shape,
    parse_slot_name,
    with_slots,
)

__all__ = [
    "HANDOFF_VERSION",
    "SUMMARY_FORMAT",
    "SUMMARY_VERSION",
    "Handoff",
    "HandoffError",
    "ListedFile",
    "build_handoff",
    "external_simulator",
    "file_sha256",
    "verified_handoff",
]

#: ``format`` and ``format_version`` of ``summary.json``.
SUMMARY_FORMAT = "mpiuq.campaign-summary"
SUMMARY_VERSION = 1
#: Version of the ``handoff`` record.
HANDOFF_VERSION = 1
#: Point estimates of a parameter the record holds.
ESTIMATE_KEYS = ("median", "mean", "map")


class HandoffError(CalibrationError, ValueError):
    """A campaign's hand-off record is missing, malformed or does not match its files."""


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@dataclass(frozen=True, slots=True)
class ListedFile:
    """A file of the results folder the record vouches for."""

    name: str
    size: int
    sha256: str

    @classmethod
    def of(cls, path: Path) -> ListedFile:
        """The record of the file ``path`` as it is now."""
        return cls(path.name, path.stat().st_size, file_sha256(path))


@dataclass(frozen=True, slots=True)
class Handoff:
    """What a finished campaign hands to the simulator (see the module docstring).

    Attributes
    ----------
    campaign, fingerprint
        The campaign's name and run fingerprint.
    estimates
        ``{parameter: {"median", "mean", "map"}}`` (``map`` None unless unique).
    map_unique, map_reason
        Whether the MAP is unique, and why (or why not).
    fixed
        The fixed simulator values (scalars; the regime table holds the regimes').
    regimes
        The campaign's regime table, names included (its nominal per-regime values).
    files
        The posterior files (``posterior.nc``, ``posterior_draws.nc``) of the run.
    """

    campaign: str
    fingerprint: str
    estimates: dict[str, dict[str, float | None]]
    map_unique: bool
    map_reason: str
    fixed: dict[str, float]
    regimes: tuple[Regime, ...]
    files: tuple[ListedFile, ...]

    def to_json(self) -> dict[str, Any]:
        """The JSON table of the record, with ``sha256``: the digest of its other fields
        (canonical JSON), so a value changed in the file is recognised."""
        body = self._body()
        return {**body, "sha256": _record_digest(body)}

    def _body(self) -> dict[str, Any]:
        return {
            "version": HANDOFF_VERSION,
            "campaign": self.campaign,
            "fingerprint": self.fingerprint,
            "estimates": self.estimates,
            "map": {"unique": self.map_unique, "reason": self.map_reason},
            "fixed": self.fixed,
            "regimes": [_regime_json(r) for r in self.regimes],
            "files": [{"name": f.name, "size": f.size, "sha256": f.sha256} for f in self.files],
        }

    def params(self, values: Mapping[str, Any]) -> SimParams:
        """A parameter set: the fixed values, the regime table (names kept), then
        ``values`` (calibrated values and overrides: scalars or ``regime<k>_<field>``).

        Raises
        ------
        ParameterError
            If a value is unknown or fails the simulator's range check.
        """
        merged: dict[str, Any] = dict(self.fixed) | dict(values)
        scalars = {k: v for k, v in merged.items() if parse_slot_name(k) is None}
        slots = {k: v for k, v in merged.items() if parse_slot_name(k) is not None}
        explicit = bool(self.regimes) and not _of_thresholds(self.regimes)
        base = SimParams(regimes=self.regimes) if explicit else SimParams()
        if explicit:  # the table sets the thresholds: fixed copies of them are dropped
            for name in ("small_max_bytes", "eager_max_bytes"):
                if name in scalars and int(scalars[name]) == getattr(base, name):
                    del scalars[name]
        out = base.with_values(**scalars) if scalars else base
        if slots:
            if not out.regimes:
                out = SimParams.from_mapping({"regimes": out.regime_table()}, base=out)
            table = with_slots(out.regime_table(), slots)
            out = SimParams.from_mapping({"regimes": table}, base=out)
        return out


def _record_digest(body: Mapping[str, Any]) -> str:
    """SHA-256 of a record's fields as canonical JSON (sorted keys, no blanks)."""
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _of_thresholds(regimes: tuple[Regime, ...]) -> bool:
    """Whether a table is the default one of the two thresholds (mailbox, eager,
    rendezvous without per-regime costs or names of their own): the fixed
    ``small_max_bytes`` and ``eager_max_bytes`` make it (its eager range may be empty)."""
    return is_default_shape(regimes) and all(
        r.name in ("", DEFAULT_NAMES[r.protocol]) for r in regimes
    )


#: Fields of a regime recorded beside its name, protocol and bound (every slot).
_REGIME_FIELDS: tuple[str, ...] = tuple(s for s in SLOTS if s not in ("protocol", "max_bytes"))


def _regime_json(r: Regime) -> dict[str, Any]:
    return {
        "name": r.label,
        "protocol": r.protocol,
        "max_bytes": None if r.max_bytes == math.inf else int(r.max_bytes),
        **{key: getattr(r, key) for key in _REGIME_FIELDS},
    }


def build_handoff(summary: Mapping[str, Any], fingerprint: str, files: list[Path]) -> Handoff:
    """The record of a summary (as :func:`~mpiuq.calibration.reporting.report.summary_dict` makes it)
    and the posterior files ``files`` (as they are now on disk).

    Raises
    ------
    HandoffError
        If the summary lacks a table the record needs (see :func:`_parse`).
    """
    raw_mode = summary.get("map")
    mode: Mapping[str, Any] = raw_mode if isinstance(raw_mode, Mapping) else {}
    doc = {
        "version": HANDOFF_VERSION,
        "campaign": summary.get("name"),
        "fingerprint": fingerprint,
        "estimates": {
            str(n): {k: e.get(k) for k in ESTIMATE_KEYS}
            for n, e in (summary.get("parameters") or {}).items()
            if isinstance(e, Mapping)
        },
        "map": {"unique": mode.get("unique") is True, "reason": str(mode.get("reason", ""))},
        "fixed": {
            k: v for k, v in (summary.get("fixed") or {}).items() if parse_slot_name(k) is None
        },
        "regimes": summary.get("regimes") or [],
        "files": [
            {"name": p.name, "size": p.stat().st_size, "sha256": file_sha256(p)} for p in files
        ],
    }
    return _parse(doc, Path("summary.json"), sealed=False)


def external_simulator(summary: Mapping[str, Any]) -> str | None:
    """The callable or command a summary's campaign calibrated (its ``simulator`` table),
    or None for mpiuq's own simulator."""
    table = summary.get("simulator")
    if not isinstance(table, Mapping):
        return None
    return str(table.get("target", "?"))


def _bad(where: Path, key: str, value: object, expected: str) -> HandoffError:
    shown = repr(value)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    name = f"handoff.{key}" if key else "handoff"
    return HandoffError(f"{where}: {name} = {shown} is invalid: expected {expected}")


def _number(where: Path, key: str, name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _bad(where, key, value, "a finite number")
    try:
        return check_parameter_value(name, value)
    except ParameterError as exc:
        raise _bad(where, key, value, exc.allowed) from None


def _parse(doc: object, where: Path, *, sealed: bool = True) -> Handoff:
    """The typed record of a ``handoff`` table (every field checked, named on error);
    ``sealed``: it must carry its ``sha256`` (all but a record being built)."""
    if not isinstance(doc, Mapping):
        raise _bad(where, "", doc, "a table")
    if "sha256" in doc:
        body = {k: v for k, v in doc.items() if k != "sha256"}
        try:
            digest = _record_digest(body)
        except (TypeError, ValueError):
            digest = ""
        if doc["sha256"] != digest:
            raise HandoffError(
                f"{where}: the hand-off record does not match its sha256 (a value was changed "
                "after the run wrote it): re-run the campaign or restore the file"
            )
    elif sealed:
        raise _bad(where, "sha256", None, "the record's own SHA-256")
    if doc.get("version") != HANDOFF_VERSION:
        raise _bad(where, "version", doc.get("version"), f"{HANDOFF_VERSION}")
    campaign, fingerprint = doc.get("campaign"), doc.get("fingerprint")
    if not isinstance(campaign, str) or not campaign:
        raise _bad(where, "campaign", campaign, "the campaign's name")
    if not isinstance(fingerprint, str):
        raise _bad(where, "fingerprint", fingerprint, "the run's fingerprint")
    raw_est = doc.get("estimates")
    if not isinstance(raw_est, Mapping) or not raw_est:
        raise _bad(where, "estimates", raw_est, "{parameter: {median, mean, map}}")
    estimates: dict[str, dict[str, float | None]] = {}
    for name, e in raw_est.items():
        if not isinstance(e, Mapping):
            raise _bad(where, f"estimates.{name}", e, "{median, mean, map}")
        out: dict[str, float | None] = {}
        for k in ESTIMATE_KEYS:
            v = e.get(k)
            out[k] = (
                None
                if v is None and k == "map"
                else _number(where, f"estimates.{name}.{k}", str(name), v)
            )
        estimates[str(name)] = out
    mode = doc.get("map")
    if not isinstance(mode, Mapping) or not isinstance(mode.get("unique"), bool):
        raise _bad(where, "map", mode, "{unique: true|false, reason}")
    raw_fixed = doc.get("fixed")
    if not isinstance(raw_fixed, Mapping):
        raise _bad(where, "fixed", raw_fixed, "{parameter: value}")
    fixed = {str(k): _number(where, f"fixed.{k}", str(k), v) for k, v in raw_fixed.items()}
    regimes = _regimes(doc.get("regimes"), where)
    raw_files = doc.get("files")
    if not isinstance(raw_files, list):
        raise _bad(where, "files", raw_files, "a list of {name, size, sha256}")
    files = []
    for i, f in enumerate(raw_files):
        ok = (
            isinstance(f, Mapping)
            and isinstance(f.get("name"), str)
            and Path(f["name"]).name == f["name"]
            and f["name"] not in ("", ".", "..")
            and isinstance(f.get("size"), int)
            and not isinstance(f.get("size"), bool)
            and isinstance(f.get("sha256"), str)
            and len(f["sha256"]) == 64
        )
        if not ok:
            raise _bad(where, f"files[{i}]", f, "{name: a file name, size, sha256: 64 hex digits}")
        files.append(ListedFile(f["name"], f["size"], f["sha256"]))
    record = Handoff(
        campaign,
        fingerprint,
        estimates,
        mode["unique"],
        str(mode.get("reason", "")),
        fixed,
        regimes,
        tuple(files),
    )
    try:  # the record's own values make a valid parameter set
        record.params({n: e["median"] for n, e in estimates.items()})
    except ParameterError as exc:
        raise HandoffError(f"{where}: handoff gives invalid parameters ({exc})") from None
    return record


def _regimes(raw: object, where: Path) -> tuple[Regime, ...]:
    if not isinstance(raw, list):
        raise _bad(where, "regimes", raw, "a list of regime tables")
    table = []
    for k, r in enumerate(raw):
        if not isinstance(r, Mapping) or r.get("protocol") not in PROTOCOLS:
            raise _bad(where, f"regimes[{k}]", r, f"a regime with a protocol of {list(PROTOCOLS)}")
        if not isinstance(r.get("name"), str):
            raise _bad(where, f"regimes[{k}].name", r.get("name"), "the regime's name")
        values: dict[str, Any] = {"protocol": r["protocol"], "name": r["name"]}
        mx = r.get("max_bytes")
        values["max_bytes"] = math.inf if mx is None else mx
        for key, value in r.items():  # a former field name (latency_us) as its current one
            field = SLOT_ALIASES.get(str(key), str(key))
            if field in _REGIME_FIELDS:
                values[field] = value
        table.append(values)
    try:
        regimes = tuple(Regime(**v) for v in table)
        if regimes and not _of_thresholds(regimes):
            SimParams(regimes=regimes)  # validated: thresholds, names, ranges
    except (ParameterError, TypeError) as exc:
        raise _bad(where, "regimes", raw, f"a valid regime table ({exc})") from None
    return regimes


def verified_handoff(file: Path, doc: Mapping[str, Any], needed: tuple[str, ...] = ()) -> Handoff:
    """The hand-off record of the summary ``doc`` read from ``file``, checked as a unit.

    Parameters
    ----------
    file
        The ``summary.json`` read.
    doc
        Its content.
    needed
        Names of the files about to be read: each must be listed, present, of its
        recorded size and SHA-256.

    Raises
    ------
    HandoffError
        If the summary has no format version or record, the record is malformed or of
        another campaign or run than the summary, a needed file is not listed, missing or
        changed (names the file and what differs).
    """
    if doc.get("format") != SUMMARY_FORMAT or doc.get("format_version") != SUMMARY_VERSION:
        raise HandoffError(
            f"{file} is not a version {SUMMARY_VERSION} campaign summary (format "
            f"{doc.get('format')!r}, version {doc.get('format_version')!r}): it has no checked "
            "hand-off record; re-run 'mpiuq campaign run' on its campaign file"
        )
    external = external_simulator(doc)
    if external is not None:
        raise HandoffError(
            f"{file} is the calibration of the external simulator {external!r}: its "
            "parameters are that simulator's, not mpiuq's, so it has no hand-off to replay "
            "or what-if; run the external simulator with its calibrated parameters instead"
        )
    record = _parse(doc.get("handoff"), file)
    raw_run = doc.get("run")
    run: Mapping[str, Any] = raw_run if isinstance(raw_run, Mapping) else {}
    if record.campaign != doc.get("name") or record.fingerprint != (run.get("fingerprint") or ""):
        raise HandoffError(
            f"{file}: handoff is of campaign {record.campaign!r} run {record.fingerprint[:12]!r}, "
            f"the summary of {doc.get('name')!r} run {str(run.get('fingerprint'))[:12]!r}: the "
            "record and the summary are of different runs"
        )
    listed = {f.name: f for f in record.files}
    for name in needed:
        entry = listed.get(name)
        path = file.parent / name
        if entry is None:
            raise HandoffError(
                f"{path} is not part of {file}'s hand-off (its record lists "
                f"{sorted(listed) or 'no posterior file'}): not this calibration's draws"
            )
        if not path.is_file():
            raise HandoffError(f"{path} is missing (the hand-off of {file} lists it)")
        size = path.stat().st_size
        if size != entry.size or file_sha256(path) != entry.sha256:
            raise HandoffError(
                f"{path} has changed since the run that wrote {file} (its size or SHA-256 "
                "differs from the hand-off record): not that calibration's draws; re-run the "
                "campaign or restore the file"
            )
    return record
