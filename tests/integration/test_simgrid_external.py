"""The SimGrid worked example (experiments/simgrid/): SMPI as an external simulator.

The campaign files load and fit their run budgets; with SimGrid installed (smpicc and
smpirun; skipped otherwise), one command call runs smpirun for each parameter set and
answers with SMPI's own semantics: smpi/os is the duration of a detached MPI_Send, a
rendezvous half round trip is latency + size / bandwidth, and SimGrid's piecewise-fit
procedure yields settings smpirun accepts."""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mpiuq.calibration.config import load_campaign
from mpiuq.calibration.pipeline.budget import check_campaign_budget
from mpiuq.calibration.pipeline.run_plan import run_plan

HERE = Path(__file__).resolve().parents[2] / "experiments" / "simgrid"
HAVE_SIMGRID = shutil.which("smpirun") is not None and shutil.which("smpicc") is not None
needs_simgrid = pytest.mark.skipif(not HAVE_SIMGRID, reason="SimGrid (smpirun, smpicc) absent")


@pytest.mark.parametrize("machine", ["stampede", "taurus"])
def test_campaign_files_fit_their_budget(machine: str) -> None:
    campaign = load_campaign(HERE / f"{machine}.toml")
    check_campaign_budget(campaign)
    plan = run_plan(campaign)
    assert plan.budget == 1500 and plan.required <= plan.budget
    ext = campaign.simulator.external
    assert ext is not None and ext.kind == "command"
    assert [label for label, _ in ext.output_sizes] == ["pingpong", "send", "isend"]


@pytest.fixture(scope="module")
def smpi_module() -> object:
    """experiments/simgrid/smpi_pingpong.py (imports without SimGrid)."""
    sys.path.insert(0, str(HERE))
    import smpi_pingpong

    return smpi_pingpong


@pytest.fixture(scope="module")
def smpi() -> object:
    if not HAVE_SIMGRID:
        pytest.skip("SimGrid (smpirun, smpicc) absent")
    sys.path.insert(0, str(HERE))
    import smpi_pingpong

    return smpi_pingpong


@needs_simgrid
def test_one_command_call_runs_smpirun_per_parameter_set(tmp_path: Path) -> None:
    names = ["lat_us", "bw_GBps", "os_us", "or_us"]
    rows = [[2.0, 5.0, 0.5, 0.3], [2.0, 5.0, 1.5, 0.3]]
    with (tmp_path / "in.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(names)
        w.writerows(rows)
    proc = subprocess.run(
        [
            sys.executable,
            "smpi_pingpong.py",
            "stampede",
            "stampede.toml",
            str(tmp_path / "in.csv"),
            str(tmp_path / "out.csv"),
        ],
        cwd=HERE,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    lines = list(csv.reader((tmp_path / "out.csv").open()))
    header, values = lines[0], np.array(lines[1:], dtype=float)
    assert header[0] == "pingpong:1" and header[30] == "send:1" and len(header) == 90
    assert values.shape == (2, 90)
    send_small = values[:, 30]  # MPI_Send of 1 B: detached, returns after smpi/os
    np.testing.assert_allclose(np.diff(send_small), 1.0, atol=1e-6)  # os_us 0.5 -> 1.5
    half = values[:, :30]
    sizes = np.array([int(h.split(":")[1]) for h in header[:30]])
    for regime in (sizes < 17420, sizes >= 17420):  # within a regime, never faster when larger
        assert np.all(np.diff(half[:, regime], axis=1) >= -1e-9)


@needs_simgrid
def test_rendezvous_half_round_trip_is_latency_plus_transfer(smpi: object) -> None:
    """Above the eager threshold SMPI applies no os/or: the half round trip grows by the
    added latency exactly, and by size / bandwidth (SimGrid's bandwidth correction
    included) when the bandwidth halves."""
    m = smpi.MACHINES["stampede"]  # type: ignore[attr-defined]
    sizes = [110012, 989921]
    base = {"lat_us": 2.0, "bw_GBps": 5.0, "os_us": 0.7, "or_us": 0.4}
    run = smpi.run_smpi  # type: ignore[attr-defined]
    at = smpi.settings_from_parameters  # type: ignore[attr-defined]
    r0 = np.array(run(at(base, m), sizes))[:, 0]
    r1 = np.array(run(at(base | {"lat_us": 3.0}, m), sizes))[:, 0]
    r2 = np.array(run(at(base | {"bw_GBps": 2.5}, m), sizes))[:, 0]
    np.testing.assert_allclose(r1 - r0, 1.0, atol=1e-6)
    transfer = r2 - r0  # the extra time at half the bandwidth = the transfer time at 5 GB/s
    np.testing.assert_allclose(transfer / np.array(sizes), transfer[0] / sizes[0], rtol=1e-3)


@needs_simgrid
def test_piecewise_procedure_gives_runnable_settings(smpi: object, benchmarks_dir: Path) -> None:
    import piecewise_fit as pf

    m = smpi.MACHINES["taurus"]  # type: ignore[attr-defined]
    fit = pf.fit("taurus", m, benchmarks_dir / m.data)
    assert len(fit.settings.bw_factor) == 5 and all(f > 0 for _, f in fit.settings.bw_factor)
    # the MPI_Send line of the first segment: ~3.8 us at 1 B (data README: median 3.75 us)
    intercept = fit.lines["send"][0][2]  # type: ignore[index]
    assert 3.0e-6 < intercept < 4.5e-6
    out = smpi.run_smpi(fit.settings, [1, 65626])  # type: ignore[attr-defined]
    assert len(out) == 2 and all(v > 0 for row in out for v in row)


def test_replay_platform_numbers_are_plain_floats(smpi_module: object) -> None:
    """NumPy 2 prints np.float64(...) as its repr: SimGrid refused such a platform."""
    sys.path.insert(0, str(HERE))
    import replay

    machine = smpi_module.MACHINES["taurus"]  # type: ignore[attr-defined]
    values = {"link_ns_per_kB": np.float64(1000.0), "lat_us": np.float64(2.0)}
    s = smpi_module.settings_from_parameters(values, machine)  # type: ignore[attr-defined]
    xml = replay.cluster_xml(s, 4, "1Gf")
    assert 'bw="1000000000.0Bps" lat="1e-06s"' in xml and "np." not in xml
