"""The recorded posterior path: a resumed run takes the path its first attempt chose."""

from __future__ import annotations

from pathlib import Path

from mpiuq.calibration.sampling.path_record import (
    PATH_FILE,
    discard_path_choice,
    read_path_choice,
    write_path_choice,
)
from mpiuq.calibration.sampling.posterior_path import PathChoice

CHOICE = PathChoice("direct", "auto", 64, 0.01, 42.0, 300.0, "automatic: timed")


def test_a_recorded_choice_is_read_back_for_the_same_run_only(tmp_path: Path) -> None:
    write_path_choice(tmp_path, "abc", CHOICE)
    assert read_path_choice(tmp_path, "abc") == CHOICE
    assert read_path_choice(tmp_path, "another run") is None
    assert not list(tmp_path.glob("*.partial-*"))
    discard_path_choice(tmp_path)
    assert read_path_choice(tmp_path, "abc") is None
    discard_path_choice(tmp_path)  # nothing to discard: no error


def test_a_damaged_record_is_ignored(tmp_path: Path) -> None:
    for text in ("", "{", "[]", '{"fingerprint": "abc"}', '{"fingerprint": "abc", "choice": 1}'):
        (tmp_path / PATH_FILE).write_text(text)
        assert read_path_choice(tmp_path, "abc") is None
    write_path_choice(tmp_path, "abc", CHOICE)
    doc = (tmp_path / PATH_FILE).read_text().replace('"direct"', '"sideways"')
    (tmp_path / PATH_FILE).write_text(doc)
    assert read_path_choice(tmp_path, "abc") is None
