"""Per-link utilisation of a packet-network run and its hottest links."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from mpiuq.simulator.codes import LINK_CLASS_NAMES
from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.parameters import SimParams
from mpiuq.simulator.topologies.base import Topology


@dataclass(frozen=True, slots=True)
class LinkUsage:
    """Traffic of one directed link.

    Attributes
    ----------
    link
        Link id in the topology.
    link_class
        ``"injection"`` (node -> switch), ``"network"`` (switch -> switch) or ``"ejection"``.
    src, dst
        Source and destination (node id for the node end, switch id otherwise).
    bytes
        Bytes carried.
    busy_s
        Seconds the link spent transmitting (bytes / bandwidth).
    utilisation
        ``busy_s`` divided by the simulated time (0..1).
    """

    link: int
    link_class: str
    src: int
    dst: int
    bytes: float
    busy_s: float
    utilisation: float


def link_utilisation(
    link_bytes: npt.NDArray[np.float64],
    topology: Topology,
    params: SimParams,
    simulated_time_s: float,
) -> npt.NDArray[np.float64]:
    """Fraction of the simulated time each link spent transmitting.

    Injection links run at ``injection_bw_GBps``, every other link at ``link_bw_GBps``.

    Raises
    ------
    SettingError
        If ``link_bytes`` does not have one entry per link of ``topology``.
    """
    n_links = topology.link_class.shape[0]
    if link_bytes.shape != (n_links,):
        raise SettingError(
            f"link_bytes has shape {link_bytes.shape}: expected ({n_links},) for this topology"
        )
    bw = np.where(topology.link_class == 0, params.injection_bw_GBps, params.link_bw_GBps) * 1e9
    busy = link_bytes / bw
    return busy / simulated_time_s if simulated_time_s > 0 else np.zeros_like(busy)


def hottest_links(
    link_bytes: npt.NDArray[np.float64],
    topology: Topology,
    params: SimParams,
    simulated_time_s: float,
    top: int = 10,
) -> list[LinkUsage]:
    """The ``top`` links with the highest utilisation, hottest first (ties by link id)."""
    util = link_utilisation(link_bytes, topology, params, simulated_time_s)
    order = np.lexsort((np.arange(util.shape[0]), -util))[:top]
    out = []
    for lk in order:
        cls = int(topology.link_class[lk])
        bw = (params.injection_bw_GBps if cls == 0 else params.link_bw_GBps) * 1e9
        out.append(
            LinkUsage(
                link=int(lk),
                link_class=LINK_CLASS_NAMES[cls],
                src=int(topology.link_src[lk]),
                dst=int(topology.link_dst[lk]),
                bytes=float(link_bytes[lk]),
                busy_s=float(link_bytes[lk] / bw),
                utilisation=float(util[lk]),
            )
        )
    return out
