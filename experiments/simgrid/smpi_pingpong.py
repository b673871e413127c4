"""SimGrid/SMPI as an external simulator of mpiuq: the ping-pong benchmark under smpirun.

One simulator run is one parameter set: a two-host platform whose link has the set's
bandwidth and latency, the SMPI network and host factors of the set (``smpi/bw-factor``,
``smpi/lat-factor``, ``smpi/os``, ``smpi/or``, ``smpi/ois``: the parameters of SimGrid's
own calibration procedure), and one ``smpirun`` of ``pingpong.c`` (compiled once with
``smpicc``) over every message size; its outputs are the four series of the
platform-calibration benchmark at those sizes: half round trip, MPI_Send, MPI_Isend and
MPI_Recv of an arrived message, in microseconds.

Used as a command by the campaigns of this folder::

    command = ["python3", "smpi_pingpong.py", "stampede", "{input}", "{output}"]

(``{input}``: CSV of parameter sets with a header of parameter names; ``{output}``: the
CSV written back, header ``<label>:<size>`` as mpiuq expects, one row per set). The
campaign file's ``output_sizes`` say which series and sizes: its labels are the keys of
:data:`SERIES`.

Parameter names understood (any subset; the others keep SimGrid's neutral values):

``bw_GBps`` (or ``link_ns_per_kB``, its reciprocal: ns per 1000 B), ``lat_us``
    the link (1 GB/s = 1e9 B/s = 1000 ns per kB).
``bw_factor_<k>``, ``lat_factor_<k>``
    ``smpi/bw-factor`` and ``smpi/lat-factor`` of segment ``k`` of the machine's
    breakpoints (segment 0 starts at 0 B); a segment without a value takes the next
    segment's (1 for the last).
``inv_bw_factor_<k>``
    ``1 / smpi/bw-factor`` of segment ``k``: the segment's time per byte relative to the
    link's (the times are linear in it, which a low-order surrogate fits exactly).
``lat_factor_eager``
    ``smpi/lat-factor`` of every segment below the eager (async) threshold.
``os_us``, ``os_ns_per_kB`` (and ``or_``, ``ois_``)
    ``smpi/os`` (``smpi/or``, ``smpi/ois``) of the segments below the eager threshold:
    offset (us) and per-byte cost (ns per 1000 B); ``os_rndv_us``, ``os_rndv_ns_per_kB``
    for the other segments (default: the same offset, no per-byte cost).
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "pingpong.c"
#: The series of one run, by campaign label.
SERIES: dict[str, int] = {"pingpong": 0, "send": 1, "isend": 2, "recv": 3}
#: Wall-clock limit of one smpirun, seconds.
SMPIRUN_TIMEOUT_S = 300.0


@dataclass(frozen=True, slots=True)
class Machine:
    """What the data READMEs say about a machine's MPI (platform-calibration settings).

    Attributes
    ----------
    data
        Folder of the data under ``../shared/data/benchmarks``.
    breakpoints
        The authors' segment boundaries, bytes (``*_breakpoints``).
    async_bytes
        ``smpi/async-small-thresh``: the eager threshold of the authors' configuration.
    detached_bytes
        ``smpi/send-is-detached-thresh``.
    """

    data: str
    breakpoints: tuple[int, ...]
    async_bytes: int
    detached_bytes: int


#: Stampede (MVAPICH2 2.1 over FDR InfiniBand): breakpoints 150, 5000, 17420 (eager
#: threshold of testplatform.xml) and 110000 B (Detached); the data show MPI_Send blocking
#: from 17,498 B, so sends are detached only below the eager threshold.
#: Taurus (Open MPI TCP BTL, 10 GbE): breakpoints 1420, 33500, 65536 (eager threshold of
#: taurus.xml) and 320000 B (detached_threshold of taurus.xml).
MACHINES: dict[str, Machine] = {
    "stampede": Machine("simgrid_stampede_ib_mvapich2", (150, 5000, 17420, 110000), 17420, 17420),
    "taurus": Machine(
        "simgrid_taurus_10gbe_openmpi_tcp", (1420, 33500, 65536, 320000), 65536, 320000
    ),
}


@dataclass(frozen=True, slots=True)
class SmpiSettings:
    """A platform and its SMPI factors, in SimGrid's units (s, B/s).

    Attributes
    ----------
    bw_Bps, lat_s
        The link.
    bw_factor, lat_factor
        ``(from_bytes, factor)`` per segment.
    os, or_, ois
        ``(from_bytes, offset_s, per_byte_s)`` per segment.
    async_bytes, detached_bytes
        ``smpi/async-small-thresh`` and ``smpi/send-is-detached-thresh``.
    """

    bw_Bps: float
    lat_s: float
    bw_factor: tuple[tuple[int, float], ...] = ((0, 1.0),)
    lat_factor: tuple[tuple[int, float], ...] = ((0, 1.0),)
    os: tuple[tuple[int, float, float], ...] = ((0, 0.0, 0.0),)
    or_: tuple[tuple[int, float, float], ...] = ((0, 0.0, 0.0),)
    ois: tuple[tuple[int, float, float], ...] = ((0, 0.0, 0.0),)
    async_bytes: int = 0
    detached_bytes: int = 65536
    extra: tuple[str, ...] = field(default=())

    def cfg(self) -> list[str]:
        """The ``--cfg`` options of smpirun."""

        def table(rows: Sequence[tuple[float, ...]]) -> str:
            return ";".join(":".join(_num(v) for v in row) for row in rows)

        return [
            "--cfg=smpi/simulate-computation:no",
            f"--cfg=smpi/bw-factor:{table(self.bw_factor)}",
            f"--cfg=smpi/lat-factor:{table(self.lat_factor)}",
            f"--cfg=smpi/os:{table(self.os)}",
            f"--cfg=smpi/or:{table(self.or_)}",
            f"--cfg=smpi/ois:{table(self.ois)}",
            f"--cfg=smpi/async-small-thresh:{self.async_bytes}",
            f"--cfg=smpi/send-is-detached-thresh:{self.detached_bytes}",
            *self.extra,
        ]

    def platform_xml(self) -> str:
        """Two hosts joined by one link of the settings' bandwidth and latency."""
        return (
            "<?xml version='1.0'?>\n"
            '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
            '<platform version="4.1">\n'
            '  <zone id="calibration" routing="Full">\n'
            '    <host id="node-0" speed="1Gf"/>\n'
            '    <host id="node-1" speed="1Gf"/>\n'
            f'    <link id="link" bandwidth="{_num(self.bw_Bps)}Bps" latency="{_num(self.lat_s)}s"/>\n'
            '    <route src="node-0" dst="node-1"><link_ctn id="link"/></route>\n'
            "  </zone>\n"
            "</platform>\n"
        )


def _num(v: float) -> str:
    return repr(float(v)) if not float(v).is_integer() or abs(v) >= 1e15 else str(int(v))


def settings_from_parameters(values: Mapping[str, float], machine: Machine) -> SmpiSettings:
    """SMPI settings of one parameter set (names of the module docstring).

    A segment without its own ``bw_factor_<k>`` / ``lat_factor_<k>`` takes the value of the
    nearest segment above it that has one (1 for the last). The overheads ``<o>_us`` and
    ``<o>_ns_per_kB`` apply to the segments below the eager (async) threshold,
    ``<o>_rndv_us`` and ``<o>_rndv_ns_per_kB`` to the others (default: the same offset,
    no per-byte cost).

    Raises
    ------
    ValueError
        For an unknown parameter name.
    """
    starts = (0, *machine.breakpoints)
    n = len(starts)
    bwf: list[float | None] = [None] * n
    latf: list[float | None] = [None] * n
    lin: dict[str, dict[str, float]] = {"os": {}, "or": {}, "ois": {}}
    bw, lat = 1e9, 1e-6
    for name, v in values.items():
        if name == "bw_GBps":
            bw = v * 1e9
        elif name == "link_ns_per_kB":
            if not v > 0:
                raise ValueError(f"{name} = {v!r}: expected a positive value")
            bw = 1e12 / v
        elif name == "lat_us":
            lat = v * 1e-6
        elif m := re.fullmatch(r"(inv_bw|bw|lat)_factor_(\d+)", name):
            k = int(m.group(2))
            if k >= n:
                raise ValueError(f"{name}: the machine has segments 0 to {n - 1}")
            if m.group(1) == "inv_bw" and not v > 0:
                raise ValueError(f"{name} = {v!r}: expected a positive value")
            if m.group(1) == "lat":
                latf[k] = v
            else:
                bwf[k] = 1.0 / v if m.group(1) == "inv_bw" else v
        elif name == "lat_factor_eager":
            for k, s in enumerate(starts):
                if s < machine.async_bytes:
                    latf[k] = v
        elif m := re.fullmatch(r"(os|or|ois)_(rndv_)?(us|ns_per_kB)", name):
            lin[m.group(1)][(m.group(2) or "") + m.group(3)] = v
        else:
            raise ValueError(f"unknown SimGrid parameter {name!r}")

    def filled(f: list[float | None]) -> tuple[tuple[int, float], ...]:
        out, above = [], 1.0
        for k in reversed(range(n)):
            above = f[k] if f[k] is not None else above
            out.append((starts[k], float(above)))
        return tuple(reversed(out))

    def overhead(o: str) -> tuple[tuple[int, float, float], ...]:
        p = lin[o]
        eager = (p.get("us", 0.0) * 1e-6, p.get("ns_per_kB", 0.0) * 1e-12)
        rndv = (p.get("rndv_us", p.get("us", 0.0)) * 1e-6, p.get("rndv_ns_per_kB", 0.0) * 1e-12)
        return tuple((s, *(eager if s < machine.async_bytes else rndv)) for s in starts)

    return SmpiSettings(
        bw,
        lat,
        filled(bwf),
        filled(latf),
        overhead("os"),
        overhead("or"),
        overhead("ois"),
        machine.async_bytes,
        machine.detached_bytes,
    )


def binary(cache: Path | None = None) -> Path:
    """``pingpong.c`` compiled with smpicc (once per source version, in a cache folder)."""
    smpicc = shutil.which("smpicc")
    if smpicc is None:
        raise RuntimeError("smpicc not found: install SimGrid (Debian: libsimgrid-dev)")
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:12]
    folder = cache or Path(os.environ.get("MPIUQ_SIMGRID_CACHE", HERE / "build"))
    exe = folder / f"pingpong-{digest}"
    if not exe.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".pingpong-{digest}-{os.getpid()}"
        proc = subprocess.run(
            [smpicc, "-O2", "-o", str(tmp), str(SOURCE)],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"smpicc failed: {proc.stderr[-2000:]}")
        tmp.replace(exe)
    return exe


def run_smpi(
    settings: SmpiSettings, sizes: Sequence[int], exe: Path | None = None
) -> list[list[float]]:
    """One smpirun of the ping-pong over ``sizes``; rows ``[half, send, isend, recv]`` in us.

    Raises
    ------
    RuntimeError
        If smpirun fails, times out or prints an unexpected output.
    """
    smpirun = shutil.which("smpirun")
    if smpirun is None:
        raise RuntimeError("smpirun not found: install SimGrid (Debian: libsimgrid-dev)")
    program = exe if exe is not None else binary()
    with tempfile.TemporaryDirectory(prefix="smpi-") as tmp:
        work = Path(tmp)
        (work / "platform.xml").write_text(settings.platform_xml())
        (work / "hostfile").write_text("node-0\nnode-1\n")
        cmd = [
            smpirun, "-np", "2", "-platform", "platform.xml", "-hostfile", "hostfile",
            "--log=root.thres:critical", *settings.cfg(), str(program), *map(str, sizes),
        ]  # fmt: skip
        proc = subprocess.run(
            cmd, cwd=work, capture_output=True, text=True, timeout=SMPIRUN_TIMEOUT_S, check=False
        )
    if proc.returncode != 0:
        raise RuntimeError(f"smpirun exited with {proc.returncode}: {proc.stderr.strip()[-1500:]}")
    rows = [ln.split() for ln in proc.stdout.splitlines() if ln.strip()]
    if len(rows) != len(sizes) or any(
        len(r) != 5 or int(r[0]) != s for r, s in zip(rows, sizes, strict=False)
    ):
        raise RuntimeError(f"unexpected smpirun output: {proc.stdout[-1500:]!r}")
    return [[float(v) for v in r[1:]] for r in rows]


def output_sizes(campaign: Path) -> list[tuple[str, list[int]]]:
    """``[simulator] output_sizes`` of a campaign file: ``(label, sizes)`` per series."""
    raw = tomllib.loads(campaign.read_text(encoding="utf-8"))["simulator"]["output_sizes"]
    if isinstance(raw, list):
        return [("pingpong", [int(s) for s in raw])]
    return [(str(k), [int(s) for s in v]) for k, v in raw.items()]


def simulate_rows(
    rows: Sequence[Mapping[str, float]], machine: Machine, series: Sequence[tuple[str, list[int]]]
) -> list[list[float]]:
    """Outputs of every parameter set: the series' values at their sizes, in order."""
    sizes = sorted({s for _, ss in series for s in ss})
    exe = binary()
    out = []
    for values in rows:
        result = run_smpi(settings_from_parameters(values, machine), sizes, exe)
        by_size = dict(zip(sizes, result, strict=True))
        out.append([by_size[s][SERIES[label]] for label, ss in series for s in ss])
    return out


def main(argv: Sequence[str]) -> int:
    """``smpi_pingpong.py MACHINE CAMPAIGN.toml INPUT.csv OUTPUT.csv``."""
    if len(argv) != 4 or argv[0] not in MACHINES:
        print(
            f"usage: smpi_pingpong.py {{{'|'.join(MACHINES)}}} CAMPAIGN.toml IN.csv OUT.csv",
            file=sys.stderr,
        )
        return 2
    machine, campaign, inp, outp = MACHINES[argv[0]], Path(argv[1]), Path(argv[2]), Path(argv[3])
    series = output_sizes(campaign)
    rows = [{k: float(v) for k, v in r.items()} for r in csv.DictReader(inp.open())]
    values = simulate_rows(rows, machine, series)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([f"{label}:{s}" if len(series) > 1 else str(s) for label, ss in series for s in ss])
    w.writerows([[repr(v) for v in row] for row in values])
    outp.write_text(buf.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
