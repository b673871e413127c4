"""SimGrid platform files and hostfiles as mpiuq networks and rank placements.

``mpiuq replay TRACE --platform FILE.xml --hostfile FILE`` replays on the platform a
SimGrid user already describes. :func:`read_platform` reads a SimGrid 3.32 platform
(``<platform version="4.1">``) holding one ``<cluster>`` -- at the top or inside
``<zone>`` elements -- flat (private links, optional backbone) or with a ``FAT_TREE``,
``DRAGONFLY`` or ``TORUS`` topology (:mod:`.cluster`); any other element (hosts, links
and routes declared one by one, several clusters, ``<config>``...) is refused with a
:class:`~.errors.PlatformError` naming the file, line and element.
:func:`read_hostfile` reads SMPI's hostfile (one host name per line, ``name:N`` for
``N`` ranks, blank lines skipped) and :func:`place_ranks_on_hosts` places rank ``r`` on
entry ``r`` modulo the entries, as ``smpirun`` does (without a hostfile, on the hosts in
the lexicographic order of their names, as SimGrid's ``get_all_hosts``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from mpiuq.simulator.platform.cluster import Cluster, read_cluster
from mpiuq.simulator.platform.errors import PlatformError
from mpiuq.simulator.platform.xml_tree import XmlElement, parse_xml
from mpiuq.simulator.topologies.zone import Zone

__all__ = [
    "Hostfile",
    "Platform",
    "PlatformError",
    "place_ranks_on_hosts",
    "read_hostfile",
    "read_platform",
]

#: Platform versions read (SimGrid 3.32 writes and requires 4.1).
VERSIONS = ("4", "4.0", "4.1")
#: Elements that may wrap the cluster (their attributes are not used).
WRAPPERS = ("zone", "AS")
#: Most hostfile entries (after ``name:N`` expansion).
MAX_HOST_ENTRIES = 1 << 22


@dataclass(frozen=True)
class Platform:
    """A platform file read: where from, its cluster and the cluster's network zone."""

    file: str
    cluster: Cluster

    @property
    def zone(self) -> Zone:
        """The flow network of the cluster."""
        return self.cluster.zone

    @property
    def hosts(self) -> tuple[str, ...]:
        """Host names, in the order of the cluster's ``radical``."""
        return self.cluster.hosts

    @property
    def speed_flops(self) -> float:
        """Host speed (first power state), flop/s."""
        return self.cluster.speed_flops


def _clusters(element: XmlElement, file: str) -> list[XmlElement]:
    """The ``<cluster>`` elements under ``element`` (through zone wrappers)."""
    found = []
    for child in element.children:
        if child.tag == "cluster":
            found.append(child)
        elif child.tag in WRAPPERS:
            found += _clusters(child, file)
        else:
            raise PlatformError(
                file,
                f"unsupported element: mpiuq replays platforms of one <cluster> (possibly inside "
                f"{' or '.join(f'<{w}>' for w in WRAPPERS)}); <{child.tag}> is not read",
                line=child.line,
                element=child.label,
            )
    return found


def read_platform(path: Path | str) -> Platform:
    """Read a SimGrid platform file of one cluster.

    Raises
    ------
    PlatformError
        Naming the file, line and element: unreadable or malformed XML, a root other
        than ``<platform>``, an unsupported version or element, no cluster or several,
        a bad attribute.
    """
    path = Path(path)
    file = str(path)
    root = parse_xml(path)
    if root.tag != "platform":
        raise PlatformError(
            file, "the root element is not <platform>", line=root.line, element=root.label
        )
    version = root.attrs.get("version", "")
    if version not in VERSIONS:
        raise PlatformError(
            file,
            f"version={version!r} is not read: expected one of {list(VERSIONS)} (SimGrid 3.32)",
            line=root.line,
            element=root.label,
        )
    clusters = _clusters(root, file)
    if len(clusters) != 1:
        where = clusters[1] if clusters else root
        raise PlatformError(
            file,
            f"{len(clusters)} <cluster> elements: expected exactly one",
            line=where.line,
            element=where.label,
        )
    return Platform(file, read_cluster(clusters[0], file))


@dataclass(frozen=True)
class Hostfile:
    """An SMPI hostfile read: one entry per rank slot (``name:N`` repeated) and its line."""

    file: str
    names: tuple[str, ...]
    lines: tuple[int, ...]


def read_hostfile(path: Path | str) -> Hostfile:
    """Read an SMPI hostfile (one entry per rank slot, ``name:N`` repeated ``N`` times).

    Raises
    ------
    PlatformError
        Naming the file and line: unreadable, empty, a malformed ``name:N``, too many entries.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8", errors="strict")
    except (OSError, UnicodeDecodeError) as exc:
        raise PlatformError(str(path), f"cannot be read as text ({exc})") from None
    out: list[str] = []
    lines: list[int] = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        name, sep, count = line.rpartition(":") if ":" in line else (line, "", "")
        n = 1
        if sep:
            if not count.isdigit() or int(count) < 1 or not name:
                raise PlatformError(
                    str(path),
                    f"{line!r} is not a host name or NAME:N with N >= 1",
                    line=lineno,
                    element=line,
                )
            n = int(count)
        if len(out) + n > MAX_HOST_ENTRIES:
            raise PlatformError(
                str(path), f"more than {MAX_HOST_ENTRIES} entries", line=lineno, element=line
            )
        out += [name] * n
        lines += [lineno] * n
    if not out:
        raise PlatformError(str(path), "no host name: expected one per line")
    return Hostfile(str(path), tuple(out), tuple(lines))


def place_ranks_on_hosts(
    platform: Platform, n_ranks: int, hostfile: Hostfile | None = None
) -> npt.NDArray[np.int64]:
    """Host (node) of every rank: rank ``r`` on hostfile entry ``r`` modulo the entries
    (``smpirun``'s rule); without a hostfile, on the platform's hosts sorted by name
    (SimGrid 3.32's ``Engine::get_all_hosts``: ``node-10`` before ``node-2``).

    Raises
    ------
    PlatformError
        If a hostfile entry names no host of the platform (the first such entry named).
    """
    if hostfile is None:  # SimGrid's Engine::get_all_hosts: host names in lexicographic order
        order = sorted(range(len(platform.hosts)), key=lambda i: platform.hosts[i])
        return np.asarray(order, np.int64)[np.arange(n_ranks) % len(order)]
    index = {name: i for i, name in enumerate(platform.hosts)}
    nodes = np.empty(len(hostfile.names), np.int64)
    for i, name in enumerate(hostfile.names):
        if name not in index:
            raise PlatformError(
                hostfile.file,
                f"host {name!r} is not a host of {platform.file} (cluster "
                f"{platform.cluster.id!r}: {platform.hosts[0]} .. {platform.hosts[-1]})",
                line=hostfile.lines[i],
                element=name,
            )
        nodes[i] = index[name]
    return nodes[np.arange(n_ranks) % len(hostfile.names)]
