"""A flat cluster, optionally on a shared backbone (SimGrid's ``<cluster>`` without topology).

Every host has a private link (bandwidth ``bw``, latency ``lat``); with a backbone, every
route between two hosts crosses it: ``a``'s private link up, the backbone, ``b``'s
private link down (SimGrid ``StarZone``). Sharing policies as in SimGrid 3.32:
``SPLITDUPLEX`` (the default of ``<cluster>``) gives every host an up link and a down
link, ``SHARED`` one link both ways; SimGrid does not apply ``FATPIPE`` to private links
(they are then ``SHARED`` links), but does to the backbone (``SHARED`` by default,
``FATPIPE``: it bounds each flow alone and is not shared).

Links: private links first (``2h`` up and ``2h + 1`` down for ``SPLITDUPLEX``, else
``h``), then the backbone.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from mpiuq.simulator.codes import ZONE_STAR
from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.topologies.registry import TopologyEntry, register_topology
from mpiuq.simulator.topologies.zone import Zone
from mpiuq.simulator.topologies.zone_options import spec_values
from mpiuq.simulator.topologies.zone_routes import StarRoutes, zone_routes

#: Sharing policies of private links and of the backbone.
LINK_POLICIES: tuple[str, ...] = ("SPLITDUPLEX", "SHARED", "FATPIPE")
BACKBONE_POLICIES: tuple[str, ...] = ("SHARED", "FATPIPE")


def build_cluster_zone(
    hosts: int,
    *,
    policy: str = "SPLITDUPLEX",
    lat: float = 1.0,
    backbone_bw: float | None = None,
    backbone_lat: float = 0.0,
    backbone_policy: str = "SHARED",
    reference: tuple[float, float] | None = None,
) -> Zone:
    """A flat cluster of ``hosts`` hosts, private links of bandwidth and latency 1.

    Parameters
    ----------
    hosts
        Number of hosts (>= 1).
    policy
        Sharing policy of the private links (:data:`LINK_POLICIES`).
    lat
        Latency of the private links as a multiple of the reference (1).
    backbone_bw, backbone_lat
        Backbone bandwidth and latency as multiples of the private link's; ``None``:
        no backbone (then ``backbone_lat`` must be 0).
    backbone_policy
        ``SHARED`` or ``FATPIPE``.
    reference
        ``(link_bw_GBps, hop_latency_ns)`` of the private links (a platform file's).

    Raises
    ------
    SettingError
        Naming the bad value and what is allowed.
    """
    if isinstance(hosts, bool) or not isinstance(hosts, int) or hosts < 1:
        raise SettingError(f"cluster hosts={hosts!r} is invalid: expected a whole number >= 1")
    if policy not in LINK_POLICIES:
        raise SettingError(
            f"cluster sharing policy {policy!r} is unknown: expected {LINK_POLICIES}"
        )
    if backbone_policy not in BACKBONE_POLICIES:
        raise SettingError(
            f"backbone sharing policy {backbone_policy!r} is unknown: expected {BACKBONE_POLICIES}"
        )
    with_backbone = backbone_bw is not None
    if not with_backbone and backbone_lat != 0.0:
        raise SettingError(
            f"backbone latency {backbone_lat!r} without a backbone bandwidth: expected both"
        )
    bb_bw = float(backbone_bw) if backbone_bw is not None else 0.0
    if with_backbone and not (bb_bw > 0.0 and np.isfinite(bb_bw)):
        raise SettingError(f"backbone bandwidth {backbone_bw!r} is invalid: expected finite > 0")
    if not (np.isfinite(backbone_lat) and backbone_lat >= 0.0 and np.isfinite(lat) and lat >= 0):
        raise SettingError(
            f"latencies lat={lat!r}, backbone_lat={backbone_lat!r}: expected finite values >= 0"
        )
    split = policy == "SPLITDUPLEX"
    n_private = 2 * hosts if split else hosts
    n_links = n_private + (1 if with_backbone else 0)
    link_bw = np.ones(n_links)
    link_lat = np.full(n_links, float(lat))
    fatpipe = np.zeros(n_links, np.bool_)
    h = np.arange(hosts, dtype=np.int32)
    up = 2 * h if split else h
    down = 2 * h + 1 if split else h
    backbone = -1
    if with_backbone:
        backbone = n_private
        link_bw[backbone] = bb_bw
        link_lat[backbone] = float(backbone_lat)
        fatpipe[backbone] = backbone_policy == "FATPIPE"
    params: dict[str, object] = {"hosts": hosts, "policy": policy}
    if with_backbone:
        params |= {"backbone_bw": backbone_bw, "backbone_lat": backbone_lat}
        params["backbone_policy"] = backbone_policy
    return Zone(
        name="cluster",
        params=params,
        n_nodes=hosts,
        link_bw=link_bw,
        link_injection=np.zeros(n_links, np.bool_),
        link_lat=link_lat,
        link_fatpipe=fatpipe,
        routes=zone_routes(ZONE_STAR, star=StarRoutes(up, down, backbone)),
        max_route=3,
        reference=reference,
        notes=(
            "route: source's private link up"
            + (", backbone" if with_backbone else "")
            + ", destination's private link down",
        ),
    )


def _from_spec(p: Mapping[str, Any]) -> Zone:
    hosts = p.get("hosts")
    if hosts is None:
        raise SettingError("cluster needs hosts=N (or a trace to size it for)")
    backbone = p.get("backbone")
    return build_cluster_zone(
        int(hosts),
        policy="SPLITDUPLEX" if p.get("shared", 0) == 0 else "SHARED",
        backbone_bw=None if backbone is None else float(backbone),
        backbone_lat=float(p.get("backbone_lat", 0.0)),
    )


CLUSTER = register_topology(
    TopologyEntry(
        "cluster",
        "SimGrid's flat cluster: a private link a host, optionally on a backbone of "
        "`backbone` times the link bandwidth and `backbone_lat` hop latencies; bare: one "
        "host a rank (a platform file's `FLAT` cluster is read by `platform.cluster`)",
        "cluster:hosts=64,backbone=2.5",
        _from_spec,
        options=("hosts", "backbone", "backbone_lat", "shared"),
        value=spec_values(numbers=("backbone", "backbone_lat")),
        size_for=lambda n_ranks, params: {"hosts": n_ranks, **params},
        zone=True,
    )
)
