"""Garbage is refused, not accepted: every bad value names its file and line or key, the value
and what is allowed."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mpiuq.calibration.config import load_campaign, parse_campaign, read_toml
from mpiuq.calibration.config.limits import MAX_MESSAGE_BYTES, check_parameter_value
from mpiuq.calibration.data.benchmark_csv import read_benchmark_csv
from mpiuq.calibration.data.observations import load_observations
from mpiuq.calibration.errors import CampaignError, DataError
from mpiuq.calibration.reporting.calibrated import CalibratedParametersError, load_calibrated
from mpiuq.main import main
from mpiuq.simulator.benchmarks.run import MAX_SIZE_BYTES
from mpiuq.simulator.errors import ParameterError
from mpiuq.surrogate import ParameterBox, fit_pce
from mpiuq.surrogate.chaos.tables import read_design_sidecar, read_table_csv
from mpiuq.surrogate.errors import SurrogateInputError

HEADER = "run,msg_size_bytes,value,unit,benchmark\n"
GOOD_ROWS = "".join(
    f"{r},{s},{1.0 + 0.01 * r + s / 1e3},us,pingpong_half_rtt\n"
    for s in (1, 1000)
    for r in range(4)
)
CAMPAIGN: dict[str, Any] = {
    "name": "t",
    "seed": 3,
    "simulator": {"benchmark": "pingpong"},
    "parameters": {"post_header_delay_us": [0.1, 1.5]},
    "data": {"path": "data.csv", "benchmark": "pingpong_half_rtt", "sizes": [1, 1000]},
}


def csv_file(tmp_path: Path, rows: str, name: str = "d.csv") -> Path:
    path = tmp_path / name
    path.write_text(HEADER + GOOD_ROWS + rows, encoding="utf-8")
    return path


def test_message_size_bound_is_the_simulators() -> None:
    assert MAX_MESSAGE_BYTES == MAX_SIZE_BYTES


@pytest.mark.parametrize(
    "name", ["..", ".", "a/b", "a\\b", "a b", "tab\tname", "nul\x00", "x" * 101, ""]
)
def test_campaign_names_that_escape_the_results_folder_are_refused(
    tmp_path: Path, name: str
) -> None:
    raw = copy.deepcopy(CAMPAIGN) | {"name": name}
    with pytest.raises(CampaignError, match=r"'name' = .* a folder name of 1 to 100 printable"):
        parse_campaign(raw, tmp_path)


def test_name_dotdot_never_writes_into_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.toml").write_text(
        'name = ".."\nseed = 1\n[simulator]\n[parameters]\nlink_bw_GBps = [1.0, 9.0]\n'
        '[data]\npath = "d.csv"\nbenchmark = "b"\nsizes = [1]\n'
    )
    assert main(["campaign", "run", "c.toml"]) == 2
    assert "'name' = '..'" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.toml"]


@pytest.mark.parametrize(
    ("section", "key", "value", "pattern"),
    [
        (
            "parameters",
            "link_bw_GBps",
            [1e-300, 1e300],
            r"'parameters.link_bw_GBps'.*\[1e-06, 1e\+06\] GB/s",
        ),
        (
            "simulator",
            "fixed",
            {"hop_latency_ns": 1e300},
            r"'simulator.fixed.hop_latency_ns' = 1e\+300",
        ),
        ("simulator", "fixed", {"eager_max_bytes": 2**50}, r"eager_max_bytes' = 1125899906842624"),
        ("data", "sizes", [1, 2**41], r"'data.sizes'.*up to 1099511627776"),
        ("data", "sizes_per_protocol", 10**9, r"'data.sizes_per_protocol' = 1000000000.*<= 1000"),
        ("data", "burst_length", 2**70, r"'data.burst_length'.*<= 1000000000"),
        ("calibration", "map_starts", 10**6, r"'calibration.map_starts'.*<= 100"),
    ],
)
def test_campaign_magnitudes_are_bounded(
    tmp_path: Path, section: str, key: str, value: Any, pattern: str
) -> None:
    raw = copy.deepcopy(CAMPAIGN)
    table = raw.setdefault(section, {})
    if key == "sizes_per_protocol":
        del raw["data"]["sizes"]
    table[key] = value
    with pytest.raises(CampaignError, match=pattern):
        parse_campaign(raw, tmp_path)


def test_toml_files_too_deep_or_too_large(tmp_path: Path) -> None:
    deep = tmp_path / "deep.toml"
    deep.write_text("a = " + "[" * 50_000 + "]" * 50_000 + "\n")
    with pytest.raises(CampaignError, match="nested less deeply"):
        read_toml(deep)
    big = tmp_path / "big.toml"
    big.write_text("# " + "x" * (2 << 20) + "\n")
    with pytest.raises(CampaignError, match=r"at most 1048576 bytes"):
        read_toml(big)


def test_data_path_pointing_at_a_folder(tmp_path: Path) -> None:
    (tmp_path / "data.csv").mkdir()
    c = parse_campaign(CAMPAIGN, tmp_path)
    with pytest.raises(DataError, match=r"data.csv is a folder: expected a benchmark CSV file"):
        load_observations(c.datasets, (4096, 65536))


@pytest.mark.parametrize(
    ("row", "pattern"),
    [
        (
            "0,-8,1.5,us,pingpong_half_rtt\n",
            r"d.csv:10: msg_size_bytes -8 is out of range: expected 0..1099511627776",
        ),
        (
            "-3,8,1.5,us,pingpong_half_rtt\n",
            r"d.csv:10: run -3 is out of range: expected 0..1000000000",
        ),
        ("0,8,1e300,us,pingpong_half_rtt\n", r"d.csv:10: value 1e\+300 us .* up to 1e\+12 us"),
        ("0,8,nan,us,pingpong_half_rtt\n", r"d.csv:10: value nan us"),
        (
            "0,8,1.5,ms,pingpong_half_rtt\n",
            r"d.csv:10: unit 'ms' is invalid: expected one of \['us', 'MB/s'\]",
        ),
        (
            "0,99999999999999999999,1.5,us,pingpong_half_rtt\n",
            r"msg_size_bytes 99999999999999999999 is out of range",
        ),
        ("0,8,1.5,us\n", r"d.csv:10: row .* has 4 fields, expected 5"),
        ('0,8,"1.5\x00",us,pingpong_half_rtt\n', r"d.csv: not a text table \(control byte '\\x00' at line 10\)"),
        (
            "0,8," + "9" * 200_000 + ",us,pingpong_half_rtt\n",
            r"d.csv:10: malformed CSV \(field larger than field limit",
        ),
    ],
)
def test_benchmark_csv_rows_out_of_range(tmp_path: Path, row: str, pattern: str) -> None:
    with pytest.raises(DataError, match=pattern):
        read_benchmark_csv(csv_file(tmp_path, row), "pingpong_half_rtt")


def test_benchmark_csv_file_level_errors(tmp_path: Path) -> None:
    bad = tmp_path / "latin1.csv"
    bad.write_bytes((HEADER + GOOD_ROWS).encode() + b"0,8,1.5,\xb5s,pingpong_half_rtt\n")
    with pytest.raises(
        DataError, match=r"latin1.csv: not UTF-8 text \(invalid start byte at line 10, byte \d+\)"
    ):
        read_benchmark_csv(bad, "pingpong_half_rtt")
    with pytest.raises(DataError, match=r"missing.csv does not exist"):
        read_benchmark_csv(tmp_path / "missing.csv", "pingpong_half_rtt")
    bom = tmp_path / "bom.csv"
    bom.write_bytes(b"\xef\xbb\xbf" + (HEADER + GOOD_ROWS).encode())
    assert read_benchmark_csv(bom, "pingpong_half_rtt").value.size == 8


def test_outputs_of_1e300_are_refused_not_fitted_with_nulls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    design = tmp_path / "design.csv"
    assert (
        main(
            [
                "surrogate",
                "design",
                "--param",
                "a=0:1",
                "--param",
                "b=1:2",
                "--level",
                "3",
                "--csv",
                str(design),
            ]
        )
        == 0
    )
    _, x = read_table_csv(design)
    outputs = tmp_path / "outputs.csv"
    rows = [repr(float(v)) for v in x.sum(axis=1)]
    rows[5] = "1e300"
    outputs.write_text("y\n" + "\n".join(rows) + "\n")
    out = tmp_path / "fit"
    argv = ["surrogate", "fit", "--design", str(design), "--outputs", str(outputs)]
    assert main([*argv, "--order", "2", "--out", str(out), "--no-plot"]) == 2
    err = capsys.readouterr().err
    assert "outputs.csv, line 7, column 'y': '1e300' is out of range" in err
    assert "magnitude at most 1e+150" in err
    assert not out.exists()
    box = ParameterBox.from_bounds({"a": (0.0, 1.0), "b": (1.0, 2.0)})
    y = x.sum(axis=1)
    y[5] = 1e300
    with pytest.raises(
        SurrogateInputError, match=r"at most 1e\+150 in magnitude .*row 5, column 0 is 1e\+300"
    ):
        fit_pce(x, y, box, 2)


@pytest.mark.parametrize(
    ("content", "pattern"),
    [
        (
            b"a,b\n1,nan\n",
            r"t.csv, line 2, column 'b': 'nan' is out of range: expected a finite number",
        ),
        (b"a,b\n1,inf\n", r"line 2, column 'b': 'inf' is out of range"),
        (b"a,b\n1,x\n", r"line 2, column 'b': 'x' is not a number"),
        (b"a,b\n1,2\n\xff\n", r"t.csv: not UTF-8 text \(invalid start byte at line 3"),
        (
            b"a,\x00b\n1,2\n",
            r"t.csv: not a text table \(control byte '\\x00' at line 1\): expected a CSV table",
        ),
        (b"", r"t.csv: empty file"),
    ],
)
def test_table_csv_cells(tmp_path: Path, content: bytes, pattern: str) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes(content)
    with pytest.raises(SurrogateInputError, match=pattern):
        read_table_csv(path)


def test_table_csv_missing_or_folder(tmp_path: Path) -> None:
    with pytest.raises(SurrogateInputError, match=r"nope.csv does not exist"):
        read_table_csv(tmp_path / "nope.csv")
    with pytest.raises(SurrogateInputError, match=r"is a folder"):
        read_table_csv(tmp_path)


def test_design_sidecar_not_utf8(tmp_path: Path) -> None:
    (tmp_path / "d.csv.json").write_bytes(b'{"parameters": "\xff"}')
    with pytest.raises(SurrogateInputError, match=r"d.csv.json: unreadable design sidecar"):
        read_design_sidecar(tmp_path / "d.csv")


def test_box_wider_than_a_float() -> None:
    with pytest.raises(SurrogateInputError, match=r"range \[-1e\+308, 1e\+308\] is too wide"):
        ParameterBox.from_bounds({"a": (-1e308, 1e308)})


def test_parameter_magnitudes_on_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--sizes", "1", "--param", "link_bw_GBps=1e-300"]) == 2
    assert (
        "link_bw_GBps=1e-300 is invalid: expected a number in [1e-06, 1e+06] GB/s"
        in capsys.readouterr().err
    )
    assert check_parameter_value("small_max_bytes", 4096) == 4096.0
    with pytest.raises(ParameterError, match="one of"):
        check_parameter_value("nonsense", 1.0)


def test_calibrated_values_out_of_range(tmp_path: Path) -> None:
    from mpiuq.calibration.reporting.artefacts import write_summary

    doc = {
        "name": "x",
        "parameters": {"link_bw_GBps": {"median": 4.0, "mean": 5.0, "map": None}},
        "fixed": {},
        "map": {"unique": False, "reason": "ridge"},
        "regimes": [],
    }
    write_summary(doc, tmp_path, [], fingerprint="f")
    assert load_calibrated(tmp_path, "mean").values() == {"link_bw_GBps": 5.0}
    written = json.loads((tmp_path / "summary.json").read_text())
    from mpiuq.calibration.reporting.handoff import _record_digest

    record = written["handoff"]
    record["estimates"]["link_bw_GBps"]["median"] = 1e300  # edited, its digest recorded again
    record["sha256"] = _record_digest({k: v for k, v in record.items() if k != "sha256"})
    (tmp_path / "summary.json").write_text(json.dumps(written))
    with pytest.raises(
        CalibratedParametersError,
        match=r"handoff.estimates.link_bw_GBps.median = 1e\+300 is invalid: expected a number in",
    ):
        load_calibrated(tmp_path, "mean")  # the record is verified as a unit


def test_synthetic_noise_and_seed_are_bounded(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv = ["simulate", "--sizes", "1", "--replicas", "3", "--csv", str(tmp_path / "s.csv")]
    assert main([*argv, "--noise-cv", "1e300"]) == 2
    assert "noise_cv=1e+300 is invalid: expected a number in [0, 10.0]" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        main([*argv, "--seed", "-4"])
    assert info.value.code == 2
    assert "-4 is negative" in capsys.readouterr().err
    assert main([*argv, "--csv", str(tmp_path / "no" / "s.csv")]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'no'}: no such folder to write into" in err and "partial" not in err


def test_campaign_file_with_a_good_csv_still_loads(tmp_path: Path) -> None:
    csv_file(tmp_path, "", "data.csv")
    path = tmp_path / "c.toml"
    path.write_text(
        'name = "ok"\nseed = 1\n[simulator]\n[parameters]\npost_header_delay_us = [0.1, 1.5]\n'
        '[data]\npath = "data.csv"\nbenchmark = "pingpong_half_rtt"\nsizes = [1, 1000]\n'
    )
    obs = load_observations(load_campaign(path).datasets, (4096, 65536))
    assert np.all(obs.n_replicas == 4)


def test_a_surrogate_with_a_repeated_term_is_refused() -> None:
    """A repeated (here second constant) term would be read from uninitialised memory."""
    from mpiuq.surrogate import PolynomialChaos

    box = ParameterBox.from_bounds({"a": (0.0, 1.0)})
    x = np.linspace(0.0, 1.0, 9)[:, None]
    pce = fit_pce(x, x[:, 0] ** 2, box, 2)
    mi = pce.multi_indices.copy()
    mi[2] = 0
    with pytest.raises(SurrogateInputError, match="multi_indices must be distinct"):
        PolynomialChaos(
            box, 2, mi, pce.coefficients, pce.output_names, pce.loo_rmse,
            pce.loo_rel_error, pce.train_x, pce.train_y, pce.rank,
        )  # fmt: skip
