"""SimGrid platform files and hostfiles: what is read, and typed errors naming file, line
and element for everything else."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mpiuq.simulator.platform import (
    PlatformError,
    place_ranks_on_hosts,
    read_hostfile,
    read_platform,
)
from mpiuq.simulator.platform.units import BANDWIDTH_UNITS, TIME_UNITS, parse_quantity

HEAD = "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
CLUSTER = (
    '<cluster id="c" prefix="node-" suffix=".x" radical="0-3,8,10-12" speed="2Gf" '
    'bw="10Gbps" lat="500ns" bb_bw="5GBps" bb_lat="1us"{extra}/>'
)


def write(tmp_path: Path, body: str, name: str = "p.xml") -> Path:
    path = tmp_path / name
    path.write_text(HEAD + body)
    return path


def platform_text(extra: str = "", version: str = "4.1", wrap: bool = False) -> str:
    cluster = CLUSTER.format(extra=extra)
    if wrap:
        cluster = f'<zone id="z" routing="Full">\n  {cluster}\n</zone>'
    return f'<platform version="{version}">\n  {cluster}\n</platform>\n'


def test_flat_cluster_with_backbone(tmp_path: Path) -> None:
    p = read_platform(write(tmp_path, platform_text(wrap=True)))
    assert p.hosts == tuple(f"node-{i}.x" for i in (0, 1, 2, 3, 8, 10, 11, 12))
    assert p.speed_flops == 2e9
    zone = p.zone
    assert zone.reference == pytest.approx((10 / 8, 500.0))  # 10 Gbit/s = 1.25 GB/s, 500 ns
    assert zone.n_links == 2 * 8 + 1
    # private links 1x bandwidth, 1x latency; backbone 5 GB/s = 4x, 1 us = 2x
    assert zone.link_bw[-1] == pytest.approx(4.0) and zone.link_lat[-1] == pytest.approx(2.0)
    assert np.all(zone.link_bw[:-1] == 1.0) and np.all(zone.link_lat[:-1] == 1.0)


def test_units() -> None:
    assert parse_quantity("12.5GBps", BANDWIDTH_UNITS, "Bps") == 12.5e9
    assert parse_quantity("1GiBps", BANDWIDTH_UNITS, "Bps") == 1024**3
    assert parse_quantity("8Mbps", BANDWIDTH_UNITS, "Bps") == 1e6
    assert parse_quantity("1e9", BANDWIDTH_UNITS, "Bps") == 1e9
    assert parse_quantity("0", TIME_UNITS, "s") == 0.0
    assert parse_quantity("2ms", TIME_UNITS, "s") == pytest.approx(2e-3)
    with pytest.raises(ValueError, match="unknown unit 'Bpx'"):
        parse_quantity("3Bpx", BANDWIDTH_UNITS, "Bps")


@pytest.mark.parametrize(
    ("topology", "params", "hosts"),
    [
        ("FAT_TREE", "2;4,2;1,2;1,1", 8),
        ("DRAGONFLY", "2,1;2,1;2,1;1", 8),
        ("TORUS", "2,2,2", 8),
    ],
)
def test_hierarchical_clusters(tmp_path: Path, topology: str, params: str, hosts: int) -> None:
    extra = f' topology="{topology}" topo_parameters="{params}"'
    p = read_platform(write(tmp_path, platform_text(extra)))
    assert p.zone.n_nodes == hosts == len(p.hosts)
    assert (
        p.zone.name == {"FAT_TREE": "fattree", "DRAGONFLY": "dragonfly", "TORUS": "torus"}[topology]
    )


@pytest.mark.parametrize(
    ("body", "line", "match"),
    [
        ('<platform version="4.1">\n  <cluster id="c"\n</platform>\n', 5, "malformed XML"),
        (
            '<platform version="4.1">\n  <host id="h" speed="1Gf"/>\n</platform>\n',
            4,
            r'<host id="h">: unsupported element',
        ),
        (platform_text(version="3"), 3, "version='3' is not read"),
        ("<zone/>\n", 3, "root element is not <platform>"),
        (
            '<platform version="4.1">\n  <cluster id="c" prefix="n" suffix="" radical="0-1" '
            'speed="1Gf" bw="1GBps"/>\n</platform>\n',
            4,
            r"attribute\(s\) \['lat'\] missing",
        ),
        (platform_text(' colour="red"'), 4, r"\['colour'\] unknown"),
        (platform_text(' limiter_link="1GBps"'), 4, "limiter_link is not replayed"),
        (platform_text(' topology="RING"'), 4, "topology='RING' is unknown"),
        (
            platform_text(' topology="FAT_TREE" topo_parameters="2;4,4;1,2;1,1"'),
            4,
            "radical names 8 hosts but topology FAT_TREE",
        ),
        (
            platform_text(' topology="DRAGONFLY" topo_parameters="2,1;2,1;2"'),
            4,
            "a dragonfly is",
        ),
        (platform_text().replace('bw="10Gbps"', 'bw="fast"'), 4, "'fast' is not a number"),
        (platform_text().replace("0-3,8", "3-1"), 4, "is empty"),
        (
            '<platform version="4.1">\n'
            + CLUSTER.format(extra="")
            + "\n"
            + CLUSTER.format(extra="").replace('id="c"', 'id="d"')
            + "\n</platform>\n",
            5,
            "2 <cluster> elements: expected exactly one",
        ),
        (
            '<platform version="4.1">\n  <cluster id="c" prefix="n" suffix="" radical="0-1" '
            'speed="1Gf" bw="1GBps" lat="1us">\n    <link id="l" bandwidth="1GBps"/>\n'
            "  </cluster>\n</platform>\n",
            5,
            "only <prop>",
        ),
    ],
)
def test_bad_platforms_name_file_line_and_element(
    tmp_path: Path, body: str, line: int, match: str
) -> None:
    path = write(tmp_path, body)
    with pytest.raises(PlatformError, match=match) as info:
        read_platform(path)
    assert info.value.file == str(path)
    assert info.value.line == line
    assert f"{path}, line {line}" in str(info.value)


def test_unreadable_platform(tmp_path: Path) -> None:
    with pytest.raises(PlatformError, match="cannot be read"):
        read_platform(tmp_path / "missing.xml")


def test_hostfile_and_placement(tmp_path: Path) -> None:
    p = read_platform(write(tmp_path, platform_text()))
    hf = tmp_path / "hosts"
    hf.write_text("node-8.x\n\nnode-0.x:2\nnode-12.x\n")
    hosts = read_hostfile(hf)
    assert hosts.names == ("node-8.x", "node-0.x", "node-0.x", "node-12.x")
    assert hosts.lines == (1, 3, 3, 4)
    # rank r on entry r modulo the entries (smpirun's rule); host index in radical order
    assert place_ranks_on_hosts(p, 6, hosts).tolist() == [4, 0, 0, 7, 4, 0]
    # without a hostfile: the host names in lexicographic order, as SimGrid sorts them
    assert place_ranks_on_hosts(p, 3).tolist() == [0, 1, 5]  # node-0.x, node-1.x, node-10.x


@pytest.mark.parametrize(
    ("text", "line", "match"),
    [
        ("node-0.x\nnode-99.x\n", 2, "host 'node-99.x' is not a host"),
        ("node-0.x:zero\n", 1, "is not a host name or NAME:N"),
        ("\n\n", None, "no host name"),
    ],
)
def test_bad_hostfiles(tmp_path: Path, text: str, line: int | None, match: str) -> None:
    p = read_platform(write(tmp_path, platform_text()))
    hf = tmp_path / "hosts"
    hf.write_text(text)
    with pytest.raises(PlatformError, match=match) as info:
        place_ranks_on_hosts(p, 4, read_hostfile(hf))
    assert info.value.file == str(hf)
    assert info.value.line == line
