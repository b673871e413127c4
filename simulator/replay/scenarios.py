"""What-if scenarios: named changes to the parameters or the replay setup.

A scenario is written ``NAME: ITEM, ITEM, ...`` (or ``NAME=ITEM, ...``), each item one of

* ``PARAM*=F``, ``PARAM/=F``, ``PARAM=V``: scale or set a simulator parameter in every
  parameter set (e.g. ``link_bw_GBps*=2``), or a regime slot as ``--param`` takes them
  (``regime0_recv_overhead_us*=0.5``, ``regime0_max_bytes=256``; a former field name such
  as ``regime1_latency_us`` is read as its current one); numbers are plain decimals
  (``1_0`` is refused, not read as 10) and the results must pass the parameters' range
  check (:mod:`mpiuq.simulator.parameter_limits`);
* ``model=NAME``: another network model (``analytic``, ``packet``, ``compute-only``);
* ``topology=SPEC``: another topology (``fattree:k=16,levels=3``, or a SimGrid-shaped
  zone of the flow model such as ``cluster:hosts=64,backbone=3``: the commas of a spec
  belong to it up to the next item naming a parameter or setting);
* ``placement=linear|round-robin|random``, ``hops=N``;
* ``COLLECTIVE=ALGORITHM``: another collective algorithm (``allreduce=ring``).

Examples
--------
>>> s = parse_scenario("net2x: link_bw_GBps*=2, injection_bw_GBps*=2")
>>> s.name, s.edits
('net2x', (('link_bw_GBps', '*', 2.0), ('injection_bw_GBps', '*', 2.0)))
>>> parse_scenario("fat: topology=fattree:k=4,levels=3").settings
(('topology', 'fattree:k=4,levels=3'),)
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

from mpiuq.simulator.collectives import COLLECTIVES, validate_algorithms
from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.networks import NETWORK_MODELS
from mpiuq.simulator.parameter_limits import parse_decimal
from mpiuq.simulator.parameters import SimParams, parameter_names
from mpiuq.simulator.regimes import (
    PROTOCOLS,
    SLOTS,
    canonical_name,
    parse_slot_name,
    with_slots,
)
from mpiuq.simulator.replay.run import ReplaySetup

#: Setting names a scenario may change (besides parameters and collectives).
SETTINGS: tuple[str, ...] = ("model", "topology", "placement", "hops")

#: Placements of :mod:`mpiuq.simulator.placement`.
PLACEMENTS: tuple[str, ...] = ("linear", "round-robin", "random")

_NAME = re.compile(r"^[A-Za-z0-9_.+/-]{1,40}$")
_ITEM = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*([*/]?=)\s*(.*?)\s*$")


class ScenarioError(SettingError):
    """A scenario expression is malformed (names the text, the bad part and what is expected)."""

    def __init__(self, text: str, part: str, expected: str) -> None:
        self.text, self.part, self.expected = text, part, expected
        super().__init__(f"scenario {text!r}: {part!r} is invalid: expected {expected}")


@dataclass(frozen=True, slots=True)
class Scenario:
    """A named change of the parameters and the replay setup.

    Attributes
    ----------
    name
        Label of the scenario.
    text
        The expression it was parsed from.
    edits
        ``(parameter, op, number)`` with op ``"*"`` (scale), ``"/"`` (divide), ``"="`` (set).
    settings
        ``(setting, value)`` for ``model``, ``topology``, ``placement``, ``hops`` and
        collective algorithms (by collective name).
    """

    name: str
    text: str
    edits: tuple[tuple[str, str, float], ...] = ()
    settings: tuple[tuple[str, str], ...] = ()

    def apply_params(self, params: SimParams) -> SimParams:
        """``params`` with the scenario's parameter edits.

        Raises
        ------
        ScenarioError
            If an edit gives an invalid value (e.g. a threshold that is no whole number).
        """
        values: dict[str, float] = {}
        current = params.as_dict()
        for name, op, number in self.edits:
            key = canonical_name(name)  # regime<k>_latency_us: regime<k>_send_overhead_us
            if key not in current:  # a slot of a regime the table does not have
                raise ScenarioError(
                    self.text,
                    name,
                    f"a slot of one of the {len(params.regime_table())} regimes "
                    f"(regime0 .. regime{len(params.regime_table()) - 1})",
                )
            old = float(values.get(key, current[key]))
            values[key] = old * number if op == "*" else old / number if op == "/" else number
        scalars = {n: v for n, v in values.items() if parse_slot_name(n) is None}
        slots = {n: v for n, v in values.items() if parse_slot_name(n) is not None}
        try:
            out = params.with_values(**scalars) if scalars else params
            if slots:  # edited in the table itself: its names and other slots are kept
                out = replace(out, regimes=with_slots(out.regime_table(), slots))
            return out
        except ValueError as exc:
            edits = ", ".join(f"{n}{op}={x:g}" for n, op, x in self.edits)
            raise ScenarioError(
                self.text, edits, f"edits giving valid parameters ({exc})"
            ) from None

    def apply_setup(self, setup: ReplaySetup) -> ReplaySetup:
        """``setup`` with the scenario's settings (the model replaces every model)."""
        s = dict(self.settings)
        algorithms = dict(setup.algorithms) | {k: v for k, v in s.items() if k in COLLECTIVES}
        return replace(
            setup,
            models=(s["model"],) if "model" in s else setup.models,
            topology=s.get("topology", setup.topology),
            placement=s.get("placement", setup.placement),
            hops=int(s["hops"]) if "hops" in s else setup.hops,
            algorithms=tuple(sorted(algorithms.items())),
        )


def parse_scenario(text: str) -> Scenario:
    """Parse ``NAME: ITEM, ...`` (see the module docstring).

    Raises
    ------
    ScenarioError
        Naming the whole text, the bad part and what was expected.
    """
    cut = min((i for i in (text.find(":"), text.find("=")) if i >= 0), default=-1)
    if cut < 0:
        raise ScenarioError(text, text, "NAME: ITEM, ... (e.g. 'net2x: link_bw_GBps*=2')")
    name, body = text[:cut].strip(), text[cut + 1 :]
    if not _NAME.match(name):
        raise ScenarioError(text, name, "a name of 1-40 letters, digits or _ . + / -")
    items = _items(text, body)
    if not items:
        raise ScenarioError(text, body, "at least one item such as link_bw_GBps*=2")
    edits: list[tuple[str, str, float]] = []
    settings: dict[str, str] = {}
    for key, op, value, raw in items:
        if _is_parameter(key):
            edits.append((key, op[0], _number(text, raw, key, value, op)))
            continue
        if op != "=":
            raise ScenarioError(text, raw, f"{key}=VALUE ({key} is a setting, not scaled)")
        if key in settings:
            raise ScenarioError(text, raw, f"{key} set once")
        settings[key] = _setting(text, raw, key, value)
    return Scenario(name, text, tuple(edits), tuple(settings.items()))


def _items(text: str, body: str) -> list[tuple[str, str, str, str]]:
    """``(key, op, value, raw)`` per item; a topology spec keeps its own commas."""
    keys = set(SETTINGS) | set(COLLECTIVES)
    out: list[tuple[str, str, str, str]] = []
    for raw in body.split(","):
        if not raw.strip():
            raise ScenarioError(text, raw, "no empty item between commas")
        m = _ITEM.match(raw)
        if m and (m.group(1) in keys or _is_parameter(m.group(1))):
            out.append((m.group(1), m.group(2), m.group(3), raw.strip()))
        elif out and out[-1][0] == "topology" and m and m.group(2) == "=":
            key, op, value, joined = out[-1]
            out[-1] = (key, op, f"{value},{raw.strip()}", f"{joined},{raw.strip()}")
        else:
            raise ScenarioError(
                text,
                raw.strip(),
                f"NAME*=F, NAME/=F or NAME=V with NAME a parameter ({', '.join(parameter_names())}"
                f", or regime<k>_<field> with field one of {', '.join(SLOTS)}), a setting ({', '.join(SETTINGS)}) or a collective ({', '.join(COLLECTIVES)})",
            )
    return out


def _is_parameter(key: str) -> bool:
    """Whether ``key`` names a scalar parameter or a regime slot ``regime<k>_<field>``."""
    return key in parameter_names() or parse_slot_name(key) is not None


def _number(text: str, raw: str, key: str, value: str, op: str) -> float:
    """The number of an edit: a plain decimal (a protocol slot also takes a protocol name);
    factors are > 0, set values > 0 (>= 0 for a regime slot, whose costs may be none)."""
    slot = parse_slot_name(key)
    if slot is not None and slot[1] == "protocol" and op == "=" and value in PROTOCOLS:
        return float(PROTOCOLS.index(value))
    x = parse_decimal(value)
    scaled = op in ("*=", "/=")
    low_ok = x is not None and (x > 0.0 or (x == 0.0 and slot is not None and not scaled))
    if x is None or not math.isfinite(x) or not low_ok:
        what = "factor" if scaled else "value"
        sign = "positive" if scaled or slot is None else "non-negative"
        raise ScenarioError(
            text, raw, f"a {sign} finite {what} after {op!r}, written as a plain decimal number"
        )
    return x


def _setting(text: str, raw: str, key: str, value: str) -> str:
    if key == "model":
        if value not in NETWORK_MODELS:
            raise ScenarioError(text, raw, f"model one of {list(NETWORK_MODELS)}")
    elif key == "placement":
        if value not in PLACEMENTS:
            raise ScenarioError(text, raw, f"placement one of {list(PLACEMENTS)}")
    elif key == "hops":
        if not value.isdigit() or not 1 <= int(value) <= 1000:
            raise ScenarioError(text, raw, "hops a whole number in 1..1000")
    elif key == "topology":
        _check_topology(text, raw, value)
    else:
        try:
            validate_algorithms({key: value})
        except SettingError as exc:
            raise ScenarioError(text, raw, str(exc)) from None
    return value


def _check_topology(text: str, raw: str, spec: str) -> None:
    from mpiuq.simulator.topologies import make_topology, topology_for_ranks
    from mpiuq.simulator.topologies.spec import is_zone_spec, make_zone

    try:
        if is_zone_spec(spec):
            make_zone(spec, 2)
        elif ":" in spec:
            make_topology(spec)
        else:
            topology_for_ranks(spec, 2)
    except (SettingError, ValueError, TypeError) as exc:
        raise ScenarioError(text, raw, f"a topology spec ({exc})") from None
