"""Messages a user meets first: an option typo, an empty or semicolon-separated CSV. One
line each naming what is wrong and what was expected, exit code 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mpiuq.calibration.data.benchmark_csv import read_benchmark_csv
from mpiuq.calibration.errors import DataError
from mpiuq.main import main
from mpiuq.surrogate.chaos.tables import read_table_csv
from mpiuq.surrogate.errors import SurrogateInputError
from mpiuq.surrogate.store.text_input import other_separator


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return err.strip()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["campaign", "run", "--wokers", "2", "c.toml"],
            "mpiuq campaign run: error: unknown option --wokers; did you mean --workers? "
            "(see 'mpiuq campaign run --help')",
        ),
        (["--verion"], "mpiuq: error: unknown option --verion; did you mean --version?"),
        (["--debg", "replay", "t"], "mpiuq: error: unknown option --debg; did you mean --debug?"),
        (
            ["replay", "t", "--draws", "4", "--esimate=median"],
            "mpiuq replay: error: unknown option --esimate; did you mean --estimate?",
        ),
        (["trace", "info", "--bogus", "t"], "mpiuq trace info: error: unknown option --bogus (see"),
        (["campaign", "show", "a", "b"], "mpiuq campaign show: error: unexpected argument 'b'"),
    ],
)
def test_an_unknown_word_is_blamed_on_its_sub_command(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    assert _one_line(capsys).startswith(message)


def test_the_option_typo_from_the_console(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mpiuq", "campaign", "run", "--wokers", "2", "x.toml"],
        capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (
        "mpiuq campaign run: error: unknown option --wokers; did you mean --workers? "
        "(see 'mpiuq campaign run --help')\n"
    )


CAMPAIGN = """
name = "messages"
seed = 1
[simulator]
benchmark = "pingpong"
[parameters]
post_header_delay_us = [0.2, 1.5]
[data]
path = "{csv}"
benchmark = "pingpong_half_rtt"
sizes = [1, 256]
"""


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", r"data\.csv is empty: expected a benchmark CSV with the header run,msg_size_bytes,"),
        (b"\n \n\n", r"data\.csv is empty"),
        (
            b"run;msg_size_bytes;value;unit;benchmark\n0;1;1,5;us;pingpong_half_rtt\n",
            r"data\.csv: its fields are separated by ';' \(semicolon\): expected a "
            r"comma-separated file with the header run,msg_size_bytes,value,unit,benchmark",
        ),
        (
            b"run\tmsg_size_bytes\tvalue\tunit\tbenchmark\n",
            r"separated by '\\t' \(tab\): expected a comma-separated",
        ),
    ],
)
def test_empty_and_semicolon_csv_name_the_file_and_what_was_expected(
    tmp_path: Path, content: bytes, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    csv = tmp_path / "data.csv"
    csv.write_bytes(content)
    with pytest.raises(DataError, match=message):
        read_benchmark_csv(csv, "pingpong_half_rtt")
    toml = tmp_path / "c.toml"
    toml.write_text(CAMPAIGN.format(csv=csv))
    argv = ["campaign", "run", str(toml), "--out", str(tmp_path / "out"), "--quiet"]
    assert main(argv) == 2
    line = _one_line(capsys)
    assert line.startswith(f"mpiuq campaign run: error: {csv}")
    assert line.count(str(csv)) == 1 and "header None" not in line


def test_a_semicolon_table_is_named_by_the_surrogate_reader(tmp_path: Path) -> None:
    table = tmp_path / "design.csv"
    table.write_text("a;b\n0,5;1,5\n")
    with pytest.raises(SurrogateInputError, match=r"design\.csv: its fields are separated by ';'"):
        read_table_csv(table)
    table.write_text("a\n0.5\n")  # one column is a table, not a separator problem
    assert read_table_csv(table)[0] == ("a",)


def test_other_separator() -> None:
    assert other_separator("a|b|c") == "'|' (vertical bar)"
    assert other_separator("a;b,c") is None  # has commas: read as CSV
    assert other_separator("name") is None
