"""Options and checks that SimGrid's topology zones (fat-tree, dragonfly, torus) share.

Every cable of such a zone has the cluster's bandwidth multiple and latency; SimGrid's
``SPLITDUPLEX`` makes it an up and a down link, other policies one link both ways. The
zone builders take their shape and one :class:`ZoneOptions`, check their counts with
:func:`check_counts` and :func:`check_size`, and make the zone with :meth:`ZoneOptions.zone`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.topologies.zone import Zone
from mpiuq.simulator.topologies.zone_routes import ZoneRoutes


@dataclass(frozen=True)
class ZoneOptions:
    """How the links of a SimGrid topology zone are made.

    Attributes
    ----------
    split_duplex
        ``True`` (SimGrid's ``SPLITDUPLEX``): an up and a down link per cable; ``False``:
        one link both ways.
    lat
        Latency of every link as a multiple of the reference (1).
    reference
        ``(link_bw_GBps, hop_latency_ns)`` of the links (a platform file's), or ``None``.
    """

    split_duplex: bool = True
    lat: float = 1.0
    reference: tuple[float, float] | None = None

    def zone(
        self,
        name: str,
        params: dict[str, object],
        n_nodes: int,
        link_bw: Sequence[float] | np.ndarray,
        routes: ZoneRoutes,
        max_route: int,
        notes: tuple[str, ...],
    ) -> Zone:
        """The zone of ``n_nodes`` hosts on links of bandwidth multiples ``link_bw``,
        every one shared, of latency :attr:`lat`."""
        bw = np.asarray(link_bw, np.float64)
        n_links = len(bw)
        return Zone(
            name=name,
            params={**params, "split_duplex": self.split_duplex},
            n_nodes=n_nodes,
            link_bw=bw,
            link_injection=np.zeros(n_links, np.bool_),
            link_lat=np.full(n_links, float(self.lat)),
            link_fatpipe=np.zeros(n_links, np.bool_),
            routes=routes,
            max_route=max_route,
            reference=self.reference,
            notes=notes,
        )


#: Split-duplex links of latency 1, no absolute reference.
DEFAULT_ZONE_OPTIONS = ZoneOptions()


def _whole(v: object) -> bool:
    return not isinstance(v, bool) and isinstance(v, int) and v >= 1


def check_counts(zone: str, **counts: int | Sequence[int]) -> None:
    """Refuse a count (or a vector of counts, which may not be empty) below 1.

    Raises
    ------
    SettingError
        ``"<zone> <name>=<value> is invalid: expected ..."`` for the first bad one.
    """
    for name, value in counts.items():
        if isinstance(value, Sequence):
            if not value or not all(_whole(v) for v in value):
                raise SettingError(
                    f"{zone} {name}={list(value)} is invalid: expected one or more whole "
                    "numbers >= 1"
                )
        elif not _whole(value):
            raise SettingError(f"{zone} {name}={value!r} is invalid: expected a whole number >= 1")


def check_size(zone: str, count: int, what: str, most: int) -> None:
    """Refuse a zone of more than ``most`` ``what`` (hosts, vertices).

    Raises
    ------
    SettingError
        Naming the count and the limit.
    """
    if count > most:
        raise SettingError(f"{zone} of {count} {what} is too large (at most {most})")
