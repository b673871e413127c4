"""The self-contained HTML reports: ``mpiuq campaign report``, ``mpiuq report`` (replay and
what-if folders), their content, and their rendering in headless Chromium.

Built from the committed results (results/stampede-ib, results/replay, results/whatif) as
the last commit holds them (the ``committed_results`` copy), which are always present; the
browser tests skip where chromium is not installed.
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
from browser import dump_dom, needs_chromium, screenshot
from PIL import Image
from shared_data import ROOT
from test_cli_startup import _loaded_after

from mpiuq.main import main
from mpiuq.reports.campaign import CHECK_MEANINGS, check_meaning
from mpiuq.reports.html import figure, page

DATA_PNG = re.compile(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"')


@pytest.fixture
def stampede(committed_results: Path) -> Path:
    """The committed calibration (HEAD's results/stampede-ib, copied)."""
    return committed_results / "stampede-ib"


@pytest.fixture
def whatif(committed_results: Path) -> Path:
    return committed_results / "whatif" / "ti_lulesh_512r"


@pytest.fixture
def replay(committed_results: Path) -> Path:
    return committed_results / "replay" / "ti_lulesh_512r"


def _report(argv: list[str], out: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main([*argv, "--out", str(out)]) == 0
    assert capsys.readouterr().out.strip() == f"wrote {out}"
    return out.read_text(encoding="utf-8")


def _assert_self_contained(text: str) -> None:
    """No script, no stylesheet or image fetched from elsewhere."""
    assert "<script" not in text.lower()
    assert not re.search(r'\b(src|href)="(?!data:|#)', text), "an external reference"
    assert "url(" not in text and "@import" not in text


def test_campaign_report_holds_checks_parameters_figures_and_handoff(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], stampede: Path
) -> None:
    text = _report(["campaign", "report", str(stampede)], tmp_path / "r.html", capsys)
    _assert_self_contained(text)
    summary = json.loads((stampede / "summary.json").read_text())
    for name, c in summary["checks"].items():
        assert html.escape(name) in text
        assert html.escape(c["message"]) in text
        assert html.escape(check_meaning(name)) in text
    assert text.count('class="badge fail"') == 0  # every check of this campaign passed
    warnings = sum(not c["passed"] and c["severity"] == "warn" for c in summary["checks"].values())
    assert f"Every must-pass check passed; {warnings} warning(s)" in text
    for name, p in summary["parameters"].items():
        row = text[text.index(f"<code>{name}</code>") :].split("</tr>")[0]
        assert p["information"]["label"] in row and f"{p['median']:.4g}" in row
    assert "min(injection_bw_GBps, link_bw_GBps)" in text  # the identified combination
    # every figure the run listed, embedded byte for byte, with its caption
    embedded = [base64.b64decode(d) for d in DATA_PNG.findall(text)]
    assert embedded == [(stampede / f).read_bytes() for f in summary["figures"]]
    # in-sample predictive, and no held-out validation said plainly
    assert "18 of 18</strong> sizes" in text
    assert "No held-out validation in this campaign" in text
    # the hand-off: the file replay and whatif read, and its hash
    draws = hashlib.sha256((stampede / "posterior_draws.nc").read_bytes()).hexdigest()
    assert draws == summary["run"]["files"]["posterior_draws.nc"]
    handoff = text[text.index('id="handoff"') : text.index('id="run"')]
    assert "posterior_draws.nc" in handoff and draws in handoff and "as the run wrote it" in handoff
    # the working files the repository does not keep are said to be not kept
    assert text.count("not kept (large working file)") == 3


def test_every_check_kind_has_a_plain_meaning() -> None:
    doc = (ROOT / "calibration" / "checking" / "checks.py").read_text()
    kinds = set(re.findall(r"^``([a-z_]+)[^`]*`` \((?:fail|warn)", doc, flags=re.M))
    assert kinds == set(CHECK_MEANINGS)
    assert (
        check_meaning("importance_sampling (no discrepancy)")
        == CHECK_MEANINGS["importance_sampling"]
    )
    assert "No explanation is recorded" in check_meaning("a_new_check")


def test_held_out_validation_is_rendered_when_present(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], stampede: Path
) -> None:
    folder = tmp_path / "camp"
    folder.mkdir()
    summary = json.loads((stampede / "summary.json").read_text())
    summary["validation"] = {
        "held_out": [
            {"series": "osu_bw_large", "n_sizes": 8, "n_inside_90": 7, "coverage": 0.875},
            {"series": "osu_latency", "n_sizes": 12, "n_inside_90": 12, "coverage": 1.0},
        ],
        "coverage_threshold": 0.75,
    }
    (folder / "summary.json").write_text(json.dumps(summary))
    text = _report(["campaign", "report", str(folder)], folder / "r.html", capsys)
    section = text[text.index('id="validation"') : text.index('id="handoff"')]
    assert "No held-out validation" not in section
    for needle in ("osu_bw_large", "osu_latency", "0.875", "coverage_threshold", "<th>series</th>"):
        assert needle in section
    # the figures are not in this folder: said, not fatal
    assert "Listed but not in the folder: sensitivity.png" in text
    assert "no posterior.nc or posterior_draws.nc" in text


def test_text_from_result_files_is_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], stampede: Path
) -> None:
    folder = tmp_path / "camp"
    folder.mkdir()
    summary = json.loads((stampede / "summary.json").read_text())
    summary["name"] = "<img src=x onerror=alert(1)>"
    summary["checks"]["loo_reliable"]["message"] = "k-hat <script>alert(1)</script> & more"
    (folder / "summary.json").write_text(json.dumps(summary))
    text = _report(["campaign", "report", str(folder)], folder / "r.html", capsys)
    _assert_self_contained(text)
    assert "&lt;img src=x onerror=alert(1)&gt;" in text
    assert "k-hat &lt;script&gt;alert(1)&lt;/script&gt; &amp; more" in text


def test_whatif_and_replay_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], whatif: Path, replay: Path
) -> None:
    text = _report(["report", str(whatif)], tmp_path / "w.html", capsys)
    _assert_self_contained(text)
    data = json.loads((whatif / "whatif.json").read_text())
    for name, s in data["scenarios"].items():
        assert html.escape(name) in text and f"{s['speedup']['mean']:.4f}" in text
    assert [base64.b64decode(d) for d in DATA_PNG.findall(text)] == [
        (whatif / "whatif.png").read_bytes()
    ]
    assert "results/stampede-ib/posterior_draws.nc" in text  # the calibration used

    text = _report(["report", str(replay / "replay.json")], tmp_path / "r.html", capsys)
    _assert_self_contained(text)
    for model in json.loads((replay / "replay.json").read_text())["models"]:
        assert f"<td>{model}</td>" in text
    assert [base64.b64decode(d) for d in DATA_PNG.findall(text)] == [
        (replay / "decomposition.png").read_bytes()
    ]


def test_report_of_a_folder_without_results_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    assert err.startswith(f"mpiuq report: error: {tmp_path} holds none of summary.json")
    assert main(["campaign", "report", str(tmp_path / "none")]) == 2
    assert "does not exist: expected a results folder" in capsys.readouterr().err
    bad = tmp_path / "whatif.json"
    bad.write_text("[1, 2")
    assert main(["report", str(bad)]) == 2
    assert f"{bad} is not a result file" in capsys.readouterr().err


def test_the_report_command_loads_no_plotting_and_no_compiled_loops(
    tmp_path: Path, stampede: Path
) -> None:
    out = tmp_path / "r.html"
    code = (
        "from mpiuq.main import main\n"
        f"assert main(['campaign', 'report', {str(stampede)!r}, '--out', {str(out)!r}]) == 0"
    )
    assert _loaded_after(code) == set()  # matplotlib, numba, SciPy, h5py, ...
    assert out.is_file()


# --- rendering in headless Chromium -------------------------------------------------------

MAGENTA = (255, 0, 255)


def _png(colour: tuple[int, int, int], size: tuple[int, int]) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, format="PNG")
    return buffer.getvalue()


def _pixels(png: Path) -> np.ndarray:
    return np.asarray(Image.open(png).convert("RGB"), dtype=np.int16)


@needs_chromium
def test_chromium_shows_an_embedded_figure_at_its_size(tmp_path: Path) -> None:
    """A figure of one known colour, embedded by :func:`figure`, appears on the screen
    with its full area: the data URI is decoded and drawn."""
    colour, size = (30, 160, 90), (300, 150)
    (tmp_path / "probe.png").write_bytes(_png(colour, size))
    sections = [("f", "Figure", figure(tmp_path / "probe.png", "a probe"))]
    (tmp_path / "p.html").write_text(page("probe", "probe", sections, tmp_path, "test"))
    pixels = _pixels(screenshot(tmp_path / "p.html", tmp_path / "shot.png", 1000, 800))
    hits = np.all(np.abs(pixels - np.array(colour)) <= 2, axis=-1).sum()
    assert size[0] * size[1] * 0.97 <= hits <= size[0] * size[1] * 1.03


@needs_chromium
def test_chromium_decodes_every_image_of_the_campaign_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], stampede: Path
) -> None:
    """Each embedded figure drawn over a magenta cell covers it: an image the browser
    cannot decode would leave the magenta showing (no JavaScript needed)."""
    text = _report(["campaign", "report", str(stampede)], tmp_path / "r.html", capsys)
    uris = DATA_PNG.findall(text)
    assert len(uris) == 5
    cells = "".join(
        f'<div style="position:absolute;left:{10 + 260 * i}px;top:10px;width:240px;'
        f'height:240px;background:#ff00ff"><img style="width:240px;height:240px;display:block" '
        f'src="data:image/png;base64,{u}" alt="x"></div>'
        for i, u in enumerate(uris)
    )
    (tmp_path / "probe.html").write_text(
        f'<!DOCTYPE html><html><body style="margin:0;background:#fff">{cells}</body></html>'
    )
    pixels = _pixels(screenshot(tmp_path / "probe.html", tmp_path / "probe.png", 1400, 300))
    for i in range(len(uris)):
        cell = pixels[10:250, 10 + 260 * i : 250 + 260 * i]
        magenta = np.all(np.abs(cell - np.array(MAGENTA)) <= 8, axis=-1).mean()
        assert magenta < 0.01, f"image {i} not drawn ({magenta:.0%} of its cell magenta)"
    # and the report itself: parsed whole, rendered, not blank
    dom = dump_dom(tmp_path / "r.html")
    assert dom.count("<img ") == 5 and dom.count("<table") >= 8
    assert "Hand-off to replay and what-if" in dom
    shot = _pixels(screenshot(tmp_path / "r.html", tmp_path / "r.png", 1280, 1600))
    assert (shot.sum(axis=-1) < 600).mean() > 0.05  # text, tables and badges drawn
    verdict = np.all(np.abs(shot - np.array((0x1A, 0x7F, 0x37))) <= 3, axis=-1).sum()
    assert verdict > 20_000  # the green verdict box, styled by the embedded CSS


@needs_chromium
def test_chromium_renders_the_whatif_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], whatif: Path
) -> None:
    _report(["report", str(whatif)], tmp_path / "w.html", capsys)
    shot = _pixels(screenshot(tmp_path / "w.html", tmp_path / "w.png", 1280, 1400))
    assert (shot.sum(axis=-1) < 600).mean() > 0.03
    # the figure's "MPI stack" bars (replay_plots' green) are on the screen
    stack = np.all(np.abs(shot - np.array((0x55, 0xA8, 0x68))) <= 6, axis=-1).sum()
    assert stack > 3000
