"""Options and checks that SimGrid's topology zones (fat-tree, dragonfly, torus) share.

Every cable of such a zone has the cluster's bandwidth multiple and latency; SimGrid's
``SPLITDUPLEX`` makes it an up and a down link, other policies one link both ways. The
zone builders take their shape and one :class:`ZoneOptions`, check their counts with
:func:`check_counts` and :func:`check_size`, and make the zone with :meth:`ZoneOptions.zone`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

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


def spec_options(params: Mapping[str, Any]) -> ZoneOptions:
    """The options of a ``--topology`` zone spec: ``shared=1`` makes one link of every
    cable (SimGrid's ``SHARED``), otherwise an up and a down link (``SPLITDUPLEX``)."""
    return ZoneOptions(split_duplex=params.get("shared", 0) == 0)


def spec_values(
    lists: tuple[str, ...] = (), numbers: tuple[str, ...] = ()
) -> Callable[[str, str, str], object]:
    """The value reader of a zone spec's keys: ``lists`` are whole numbers joined by
    ``x`` (``8x8x16``, read as a tuple), ``numbers`` non-negative numbers with a
    fraction, the others whole numbers. The reader raises :class:`SettingError`
    naming the zone, key and value."""

    def value(name: str, key: str, text: str) -> object:
        try:
            if key in lists:
                return tuple(int(v) for v in text.split("x"))
            if key in numbers:
                number = float(text)
                if not np.isfinite(number) or number < 0:
                    raise ValueError(text)
                return number
            return int(text)
        except ValueError:
            form = "whole numbers joined by 'x' (8x8x16)" if key in lists else "a number"
            raise SettingError(
                f"{name} parameter {key}={text!r} is invalid: expected {form}"
            ) from None

    return value


def whole_numbers(text: str, sep: str, what: str) -> tuple[int, ...]:
    """Whole numbers separated by ``sep`` (a platform file's ``topo_parameters`` part).

    Raises
    ------
    ValueError
        Naming ``what`` and the text.
    """
    items = [s.strip() for s in text.split(sep)]
    if not all(re.fullmatch(r"\d+", s) for s in items):
        raise ValueError(f"{what} {text!r}: expected whole numbers separated by {sep!r}")
    return tuple(int(s) for s in items)
