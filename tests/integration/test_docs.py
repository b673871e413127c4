"""The documentation: the site builds with warnings as errors, the README stays a short
front door, and the generated references cover what the code defines."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"


def _docs_extension() -> object:
    """The site's own Sphinx extension (docs/_ext/mpiuq_docs.py), imported by path."""
    pytest.importorskip("sphinx")
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        import mpiuq_docs
    finally:
        sys.path.remove(str(DOCS / "_ext"))
    return mpiuq_docs


def test_readme_is_a_short_front_door() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= 300
    for pattern in (
        r"\b20\d\d-\d\d-\d\d\b",  # dates
        r"\bUTC\b",
        r"load average",
        r"\bissue[ -]?\d+",
        r"\b[0-9a-f]{7,40}\b(?<!\d{7})",  # commit hashes
    ):
        assert not re.search(pattern, text, re.I), pattern
    # a first-time reader reaches the guide for their own data in one step
    assert "docs/calibrate-your-data.md" in text


def test_readme_commands_match_ci() -> None:
    text = README.read_text()
    assert "pip install -e . && mpiuq campaign run experiments/stampede-ib.toml" in text
    assert "pip install -e '.[test]' && pytest tests\n" in text  # every tier
    ci = (ROOT / ".ci" / "run").read_text()
    assert "install --quiet -e '.[test]'" in ci
    assert "\npython -m pytest -q -p no:cacheprovider tests\n" in ci
    # the site is built with warnings as errors inside the suite, which has sphinx as a test extra
    site_test = (ROOT / "tests" / "e2e" / "test_docs_site.py").read_text()
    assert '"-W"' in site_test
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert {"sphinx", "myst-parser", "pydata-sphinx-theme"} <= {
        re.split(r"[=<>]", req)[0] for req in extras["test"]
    }


def test_guide_minimal_campaign_is_valid(tmp_path: Path) -> None:
    from mpiuq.calibration.config import load_campaign

    guide = (DOCS / "calibrate-your-data.md").read_text()
    toml = re.search(r"```toml\n(.*?)```", guide, re.S)
    assert toml is not None
    (tmp_path / "my-machine.toml").write_text(toml.group(1))
    campaign = load_campaign(tmp_path / "my-machine.toml")
    assert campaign.name == "my-machine" and campaign.parameters.dim == 7
    assert campaign.datasets[0].model == "pingpong"


def test_campaign_key_tables_come_from_the_validator() -> None:
    from mpiuq.calibration import config

    docs = _docs_extension()
    tables = docs.campaign_key_tables()  # type: ignore[attr-defined]
    # every top-level key and every table the validator checks is listed
    assert set(tables[""]) == set(config._TOP_KEYS)
    for section in ("simulator", "simulator.regimes[k]", "data", "surrogate", "calibration",
                    "refinement", "posterior", "exact", "discrepancy", "checks", "executor",
                    "variants[k]"):  # fmt: skip
        assert tables[section], section
    assert set(tables["simulator.regimes[k]"]) == set(config._REGIME_KEYS)
    assert set(config._DATA_MODEL_KEYS) <= set(tables["data"])
    # ranges and defaults are the validator's (surrogate.level: 1..8, default 4)
    level = tables["surrogate"]["level"]
    assert (level.kind, level.bounds, level.default) == ("integer", ">= 1, <= 8", 4)
    # the recording does not leak: the validator's readers record nothing afterwards
    from mpiuq.calibration.config.readers import is_recording

    assert not is_recording()
