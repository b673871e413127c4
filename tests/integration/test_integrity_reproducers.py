"""The reproducers of "integrity of everything stored and handed on", one test each.

Cache damage is in ``test_cache_integrity.py``, the calibration hand-off's (unlisted or
changed draws, foreign summaries, a hash of 12345, 0 draws, draws times 1e300, regime
names) in ``test_calibration_handoff.py``, SMPI's -444 in ``test_trace_ti.py``, what-if
regime slots and ``1_0`` in ``test_whatif_scenarios.py``; the command-line ones are here.
"""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import threading
from pathlib import Path

import pytest
from cache_fuzzing import SMALL_TI

from mpiuq.main import main
from mpiuq.surrogate.store.atomic_write import partial_path, replace_atomically
from mpiuq.surrogate.store.json_text import NonFiniteJSONError, json_text, read_json, write_json


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture()
def small_trace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MPIUQ_CACHE_DIR", str(tmp_path / "cache"))
    trace = tmp_path / "small_ti.txt"
    trace.write_text(SMALL_TI)
    return trace


@pytest.mark.parametrize(
    ("scenario", "match"),
    [
        ("tiny: injection_bw_GBps*=1e-300", r"injection_bw_GBps=.* expected a number in \[1e-06"),
        (
            "big: eager_max_bytes*=1e9",
            r"eager_max_bytes=.* expected a number in \[1, 1\.09951e\+12\] B",
        ),
        (
            "lat: regime1_latency_us=1e7",
            r"regime1_latency_us=.* expected a number in \[0, 1e\+06\] us",
        ),
        ("ten: link_bw_GBps=1_0", r"plain decimal"),
    ],
)
def test_whatif_edits_giving_absurd_values_are_one_line_errors(
    small_trace: Path, scenario: str, match: str
) -> None:
    code, out, err = _run(["whatif", str(small_trace), "--scenario", scenario, "--json", "-q"])
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("mpiuq whatif: error: scenario")
    assert __import__("re").search(match, err), err


def _no_constant(token: str) -> object:
    raise AssertionError(f"{token} in JSON output")


def test_replay_and_whatif_json_is_standard_json(small_trace: Path) -> None:
    """JSON output never holds NaN or Infinity (the last regime's unbounded size is null)."""
    for argv in (
        ["replay", str(small_trace), "--json", "-q", "--model", "analytic"],
        ["whatif", str(small_trace), "--scenario", "n2: link_bw_GBps*=2", "--json", "-q"],
    ):
        code, out, err = _run(argv)
        assert code == 0, err
        assert json.loads(out, parse_constant=_no_constant)


def test_the_json_helper_refuses_or_maps_non_finite_numbers(tmp_path: Path) -> None:
    with pytest.raises(
        NonFiniteJSONError, match=r"x\.json: scenarios\.n\.sd = inf is not a finite"
    ):
        write_json(tmp_path / "x.json", {"scenarios": {"n": {"sd": float("inf")}}})
    assert not (tmp_path / "x.json").exists()
    assert json_text([float("nan")], nonfinite="null") == "[null]"
    (tmp_path / "y.json").write_text('{"a": Infinity}')
    with pytest.raises(ValueError, match="Infinity is not a JSON number"):
        read_json(tmp_path / "y.json")


def test_whatif_out_on_a_full_disk_keeps_the_old_file_and_names_it(
    small_trace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    argv = [
        "whatif",
        str(small_trace),
        "--scenario",
        "n2: link_bw_GBps*=2",
        "-q",
        "--out",
        str(out),
    ]
    assert _run(argv)[0] == 0
    before = (out / "whatif.json").read_bytes()
    real_write_text = Path.write_text

    def full(self: Path, *args: object, **kwargs: object) -> int:  # a full disk
        if ".partial-" in self.name:
            with open(self, "w") as f:
                f.write("{\n")  # half written, then the disk is full
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write_text(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "write_text", full)
    code, _, err = _run(argv)
    monkeypatch.setattr(Path, "write_text", real_write_text)
    assert code == 1 and err.count("\n") == 1
    assert f"{out / 'whatif.json'}: No space left on device" in err
    assert (out / "whatif.json").read_bytes() == before  # not truncated
    assert not list(out.glob("*.partial-*"))


def test_stale_partial_files_of_dead_processes_are_removed(tmp_path: Path) -> None:
    target = tmp_path / "posterior.nc"
    dead = target.with_name(f"{target.name}.partial-{2**22 + 12345}")  # no such process
    dead.write_text("left by a killed run")
    mine = partial_path(target)
    with replace_atomically(target) as tmp:
        assert tmp == mine
        tmp.write_text("new")
    assert target.read_text() == "new" and not dead.exists()


@pytest.mark.parametrize("kind", ["devnull", "fifo", "environ"])
def test_data_paths_that_are_no_files_get_clear_errors_without_echo(
    tmp_path: Path, kind: str
) -> None:
    from mpiuq.calibration.data.benchmark_csv import read_benchmark_csv
    from mpiuq.calibration.errors import DataError

    if kind == "fifo":
        path = tmp_path / "pipe"
        os.mkfifo(path)
        match = r"is a FIFO \(named pipe\), not a regular file"
    elif kind == "devnull":
        path, match = Path("/dev/null"), r"/dev/null is a character device, not a regular file"
    else:
        path, match = Path("/proc/self/environ"), r"not a text table \(control byte"
    with pytest.raises(DataError, match=match) as info:
        read_benchmark_csv(path, "pingpong_half_rtt")
    assert "PATH=" not in str(info.value) and "HOME=" not in str(info.value)


def test_a_non_csv_header_is_not_echoed(tmp_path: Path) -> None:
    from mpiuq.calibration.data.benchmark_csv import read_benchmark_csv
    from mpiuq.calibration.errors import DataError

    secret = tmp_path / "key.txt"
    secret.write_text("-----BEGIN PRIVATE KEY----- abcdefSECRET\n")
    with pytest.raises(DataError, match=r"no CSV header; not shown") as info:
        read_benchmark_csv(secret, "pingpong_half_rtt")
    assert "SECRET" not in str(info.value)


def test_param_numbers_are_plain_decimals() -> None:
    code, _, err = _run(["simulate", "--sizes", "8", "--param", "link_bw_GBps=1_0"])
    assert code == 2 and "a number written as a plain decimal" in err


def test_sd_floor_rel_whose_variance_underflows_is_refused(tmp_path: Path) -> None:
    from fuzzing import BASE_CAMPAIGN, base_benchmark_csv

    from mpiuq.calibration.config import load_campaign
    from mpiuq.calibration.errors import CampaignError

    (tmp_path / "data.csv").write_bytes(base_benchmark_csv())
    path = tmp_path / "c.toml"
    path.write_bytes(BASE_CAMPAIGN.replace(b"sd_floor_rel = 0.01", b"sd_floor_rel = 1e-300"))
    with pytest.raises(CampaignError, match=r"data\.sd_floor_rel.*\[1e-06, 1\]"):
        load_campaign(path)


@pytest.mark.parametrize(
    ("regime", "match"),
    [
        ("send_overhead_us = 1e7", r"regimes\[1\]\.send_overhead_us.*\[0, 1e\+06\] us"),
        ("send_overhead_us = [1.0, 1e300]", r"regimes\[1\]\.send_overhead_us.*\[0, 1e\+06\] us"),
    ],
)
def test_per_regime_values_meet_the_range_check(tmp_path: Path, regime: str, match: str) -> None:
    from mpiuq.calibration.config import load_parameter_file
    from mpiuq.calibration.errors import CampaignError

    path = tmp_path / "p.toml"
    path.write_text(
        "[simulator]\nbenchmark = 'pingpong'\n"
        "[[simulator.regimes]]\nprotocol = 'mailbox'\nmax_bytes = 128\n"
        f"[[simulator.regimes]]\nprotocol = 'mailbox'\nmax_bytes = 8192\nname = 'bcopy'\n{regime}\n"
        "[[simulator.regimes]]\nprotocol = 'rendezvous'\n"
    )
    with pytest.raises(CampaignError, match=match):
        load_parameter_file(path)


def test_numba_import_hides_scipy_from_its_own_thread_only() -> None:
    """SciPy imported by another thread while numba imports (the old way made it fail)."""
    import subprocess
    import sys

    code = (
        "import threading, time, json, sys\n"
        "from mpiuq.simulator.runtime.numba_import import import_numba\n"
        "got = {}\n"
        "def other():\n"
        "    time.sleep(0.02)\n"
        "    import scipy.special\n"
        "    got['scipy'] = scipy.__name__\n"
        "t = threading.Thread(target=other); t.start(); import_numba(); t.join()\n"
        "print(json.dumps([got.get('scipy'), 'numba' in sys.modules]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == ["scipy", True]
    assert threading.active_count() >= 1
