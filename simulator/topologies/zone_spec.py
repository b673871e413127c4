"""Specs of the SimGrid-shaped zones for ``--topology`` (flow model only).

Beside mpiuq's topologies (:mod:`.spec`), the flow model runs on SimGrid's cluster zones
without a platform file:

* ``cluster:hosts=N[,backbone=B][,backbone_lat=L][,shared=1]`` -- a flat cluster, private
  links at ``link_bw_GBps`` and one hop latency, optionally on a shared backbone of ``B``
  times the link bandwidth and ``L`` hop latencies (:mod:`.cluster_zone`); ``cluster``
  alone: one host per rank, no backbone;
* ``torus:dims=8x8x16[,shared=1]`` (:mod:`.torus_zone`);
* ``sgfattree:down=8x8x16,up=1x8x8[,parallel=1x1x1][,shared=1]`` (:mod:`.fattree_zone`);
* ``sgdragonfly:groups=G,chassis=C,routers=R,nodes=N[,blue=1,black=1,green=1][,shared=1]``
  (:mod:`.dragonfly_zone`).

``shared=1`` makes one link of every cable, used both ways (SimGrid's ``SHARED``);
otherwise an up and a down link (``SPLITDUPLEX``). Ranks are placed linearly (rank
``r`` on host ``r``) or at random.

Examples
--------
>>> make_zone("torus:dims=4x4").n_nodes
16
>>> make_zone("cluster:hosts=8,backbone=2.5").link_bw[-1]
np.float64(2.5)
"""

from __future__ import annotations

import numpy as np

from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.topologies.cluster_zone import build_cluster_zone
from mpiuq.simulator.topologies.dragonfly_zone import build_dragonfly_zone
from mpiuq.simulator.topologies.fattree_zone import build_fattree_zone
from mpiuq.simulator.topologies.spec import split_spec
from mpiuq.simulator.topologies.torus_zone import build_torus_zone
from mpiuq.simulator.topologies.zone import Zone
from mpiuq.simulator.topologies.zone_options import ZoneOptions

#: name -> (required keys, allowed keys)
ZONE_SPECS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "cluster": ((), ("hosts", "backbone", "backbone_lat", "shared")),
    "torus": (("dims",), ("dims", "shared")),
    "sgfattree": (("down", "up"), ("down", "up", "parallel", "shared")),
    "sgdragonfly": (
        ("groups", "chassis", "routers", "nodes"),
        ("groups", "blue", "chassis", "black", "routers", "green", "nodes", "shared"),
    ),
}
#: Keys whose value is a list of whole numbers (``8x8x16``).
LIST_KEYS = ("dims", "down", "up", "parallel")
#: Keys whose value may have a fraction.
FLOAT_KEYS = ("backbone", "backbone_lat")


def is_zone_spec(spec: str) -> bool:
    """Whether ``spec`` names a zone of :data:`ZONE_SPECS`."""
    return spec.strip().partition(":")[0].strip().lower() in ZONE_SPECS


def _value(name: str, key: str, text: str) -> object:
    try:
        if key in LIST_KEYS:
            return tuple(int(v) for v in text.split("x"))
        if key in FLOAT_KEYS:
            value = float(text)
            if not np.isfinite(value) or value < 0:
                raise ValueError(text)
            return value
        return int(text)
    except ValueError:
        form = "whole numbers joined by 'x' (8x8x16)" if key in LIST_KEYS else "a number"
        raise SettingError(f"{name} parameter {key}={text!r} is invalid: expected {form}") from None


def parse_zone_spec(spec: str) -> tuple[str, dict[str, object]]:
    """Split ``"name:key=value,..."`` of a zone spec into its name and parameters.

    Raises
    ------
    SettingError
        Naming the unknown zone, malformed item, unknown, repeated or missing key, or bad value.
    """
    return split_spec(spec, ZONE_SPECS, "zone", _value)


def make_zone(spec: str, n_ranks: int | None = None) -> Zone:
    """The zone of a spec (see the module docstring); a ``cluster`` without ``hosts`` has
    ``n_ranks`` hosts.

    Raises
    ------
    SettingError
        For a bad spec or zone shape.
    """
    name, p = parse_zone_spec(spec)
    split = p.get("shared", 0) == 0
    options = ZoneOptions(split_duplex=split)
    if name == "cluster":
        hosts = p.get("hosts", n_ranks)
        if hosts is None:
            raise SettingError("cluster needs hosts=N (or a trace to size it for)")
        backbone = p.get("backbone")
        return build_cluster_zone(
            int(hosts),  # type: ignore[call-overload]
            policy="SPLITDUPLEX" if split else "SHARED",
            backbone_bw=None if backbone is None else float(backbone),  # type: ignore[arg-type]
            backbone_lat=float(p.get("backbone_lat", 0.0)),  # type: ignore[arg-type]
        )
    if name == "torus":
        return build_torus_zone(p["dims"], options)  # type: ignore[arg-type]
    if name == "sgfattree":
        down = p["down"]
        parallel = p.get("parallel", (1,) * len(down))  # type: ignore[arg-type]
        return build_fattree_zone(down, p["up"], parallel, options)  # type: ignore[arg-type]
    g, blue, c, black, r, green, n = (
        int(p.get(k, 1))  # type: ignore[call-overload]
        for k in ("groups", "blue", "chassis", "black", "routers", "green", "nodes")
    )
    return build_dragonfly_zone(g, blue, c, black, r, green, n, options)


def place_on_zone(n_ranks: int, zone: Zone, placement: str, seed: int = 0) -> np.ndarray:
    """Host of every rank on a zone: ``linear`` (rank r on host r) or ``random``.

    Raises
    ------
    SettingError
        If the ranks do not fit, or for another placement.
    """
    if not 1 <= n_ranks <= zone.n_nodes:
        raise SettingError(
            f"n_ranks={n_ranks} does not fit the {zone.name} of {zone.n_nodes} hosts: "
            f"expected 1..{zone.n_nodes}"
        )
    if placement == "linear":
        return np.arange(n_ranks, dtype=np.int64)
    if placement == "random":
        return np.random.default_rng(seed).permutation(zone.n_nodes)[:n_ranks].astype(np.int64)
    raise SettingError(
        f"placement={placement!r} does not apply to the {zone.name} zone: expected linear or random"
    )
