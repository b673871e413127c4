"""Several data sets in one campaign: a ping-pong and a streaming-bandwidth data set of the
same (synthetic) machine give one joint posterior that is at least as tight as either data
set's alone on every parameter and contains the truth; the bad-[[data]] errors name the key."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from synthetic_machine import (
    PINGPONG_DATA,
    TRUTH,
    campaign_head,
    sampling_tables,
    simulate_csv,
    stream_data,
)

from mpiuq.calibration.config import parse_campaign, read_toml
from mpiuq.calibration.errors import CampaignError
from mpiuq.calibration.pipeline.campaign import run_campaign

PINGPONG_SIZES = (1, 64, 512, 1024, 2048, 8192, 16384, 32768, 131072, 524288)
STREAM_SIZES = (64, 1024, 4096, 16384, 65536, 262144, 1048576)
PINGPONG = PINGPONG_DATA
STREAM = stream_data("bw")
TAIL = sampling_tables(16)


def _head(name: str) -> str:
    return campaign_head(name, seed=3)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("joint")
    simulate_csv(d, "pingpong", PINGPONG_SIZES, "pp.csv", 1)
    simulate_csv(d, "stream", STREAM_SIZES, "bw.csv", 2)
    return d


VARIANT = """
[[variants]]
name = "eager 8 KiB"
fixed = { regime1_max_bytes = 8192 }
"""


def _posterior(
    d: Path, name: str, tables: str, extra: str = ""
) -> tuple[tuple[str, ...], np.ndarray, tuple[dict[str, object], ...]]:
    text = _head(name) + tables + TAIL + extra
    (d / f"{name}.toml").write_text(text)
    c = parse_campaign(read_toml(d / f"{name}.toml"), base_dir=d)
    r = run_campaign(c, d / name)
    assert all(ch.passed for ch in r.checks if ch.severity == "fail"), [
        ch.message for ch in r.checks if not ch.passed
    ]
    return r.main.problem.names, r.main.exact.draws, r.comparison


def test_joint_posterior_is_tighter_than_either_data_set_and_recovers_the_truth(
    data_dir: Path,
) -> None:
    names, joint, comparison = _posterior(data_dir, "joint", PINGPONG + STREAM, VARIANT)
    _, pp, _ = _posterior(data_dir, "pp", PINGPONG)
    _, bw, _ = _posterior(data_dir, "bw", STREAM)
    # the threshold is a discrete parameter: PSIS-LOO prefers the true eager limit (16 KiB)
    assert [row["variant"] for row in comparison] == ["no discrepancy", "eager 8 KiB"]
    assert float(comparison[1]["elpd_diff"]) > float(comparison[1]["dse"]) > 0.0
    assert names == tuple(TRUTH)
    sd_joint, sd_pp, sd_bw = (x.std(axis=0, ddof=1) for x in (joint, pp, bw))
    # the Monte Carlo error of an sd from ~800 moved draws is a few per cent: 5% slack
    assert np.all(sd_joint <= 1.05 * np.minimum(sd_pp, sd_bw)), (sd_joint, sd_pp, sd_bw)
    # and strictly tighter than the ping-pong alone where the stream informs (bandwidths)
    assert sd_joint[names.index("link_bw_GBps")] < 0.9 * sd_pp[names.index("link_bw_GBps")]
    for j, name in enumerate(names):
        lo, hi = np.quantile(joint[:, j], [0.05, 0.95])
        assert lo <= TRUTH[name] <= hi, (name, lo, hi)


def test_output_names_and_grouping_span_both_data_sets(data_dir: Path) -> None:
    (data_dir / "names.toml").write_text(_head("names") + PINGPONG + STREAM + TAIL)
    c = parse_campaign(read_toml(data_dir / "names.toml"), base_dir=data_dir)
    assert [d.model for d in c.datasets] == ["pingpong", "stream"]
    assert [d.likelihood for d in c.datasets] == ["gaussian", "lognormal"]
    from mpiuq.calibration.pipeline.campaign import model_for, observations_for

    obs = observations_for(c)
    model = model_for(c, obs)
    assert obs.labels == ("pp", "bw") and model.output_names[0] == "pp:pingpong_time_us@1B"
    assert obs.output_names[-1] == "bw:throughput_MBps@1048576B"
    assert np.asarray(model(np.array([list(TRUTH.values())]))).shape == (1, obs.mean.size)


@pytest.mark.parametrize(
    ("table", "key", "match"),
    [
        ('likelihood = "cauchy"', "data[1].likelihood", "one of \\['gaussian'"),
        ('summary = "mode"', "data[1].summary", "one of \\['mean', 'median', 'trimmed_mean'\\]"),
        ('model = "bibw"', "data[1].model", "a simulator benchmark"),
        ("nu = [2.0, 20.0]", "data[1].nu", "no value unless likelihood = 'student_t'"),
        ('label = "pp"', "data[1].label", "a label not used by another data table"),
        ("window = 8", "data[1].window", "no value unless model is one of \\['stream'"),
        ('benchmark = "osu_bww"', "data[1].benchmark", "a known benchmark label, one of"),
        ('benchmark = "osu_bibww"', "data[1].benchmark", "'osu_bibw', 'osu_bw'"),
        ("sizes = [0]", "data[1].sizes", "positive integers"),
    ],
)
def test_bad_data_tables_name_key_value_and_what_is_allowed(
    tmp_path: Path, table: str, key: str, match: str
) -> None:
    base = PINGPONG.replace('"pp"', '"pp2"') if table.startswith("window") else STREAM
    name = table.split(" = ")[0]
    lines = [ln for ln in base.strip().splitlines() if not ln.startswith(f"{name} = ")]
    if name == "sizes":
        lines = [ln for ln in lines if not ln.startswith("sizes_per_protocol")]
    bad = "\n" + "\n".join([*lines, table]) + "\n"
    raw = read_toml_text(tmp_path, _head("bad") + PINGPONG + bad + TAIL)
    with pytest.raises(CampaignError, match=match) as err:
        parse_campaign(raw, base_dir=tmp_path)
    assert err.value.key == key


def test_benchmark_labels_map_explicitly_to_simulator_programs(tmp_path: Path) -> None:
    """Known labels name their program (osu_bibw: the bidirectional stream, whose window
    is a setting); an unknown label is accepted only with an explicit model."""
    bibw = STREAM.replace('"stream_bw"', '"osu_bibw"') + "window = 16\n"
    raw = read_toml_text(tmp_path, _head("ok") + PINGPONG + bibw + TAIL)
    c = parse_campaign(raw, base_dir=tmp_path)
    assert [(d.benchmark, d.model, d.window) for d in c.datasets][1] == (
        "osu_bibw",
        "bidirectional_stream",
        16,
    )
    custom = STREAM.replace('"stream_bw"', '"my_bw"') + 'model = "stream"\n'
    raw = read_toml_text(tmp_path, _head("ok") + PINGPONG + custom + TAIL)
    assert parse_campaign(raw, base_dir=tmp_path).datasets[1].model == "stream"


def test_discrepancy_terms_per_series_or_shared(tmp_path: Path, data_dir: Path) -> None:
    """Several series: one spread per series and regime by default; with ``per_series =
    false`` one per regime, shared by the series (what a held-out series inherits)."""
    from mpiuq.calibration.pipeline.campaign import discrepancy_for, observations_for

    text = _head("d") + PINGPONG + STREAM + TAIL + "[discrepancy]\nmodel = 'regime'\n"
    for shared in (False, True):
        extra = "per_series = false\n" if shared else ""
        (data_dir / "d.toml").write_text(text + extra)
        c = parse_campaign(read_toml(data_dir / "d.toml"), base_dir=data_dir)
        names = discrepancy_for(c, observations_for(c)).names
        if shared:
            assert names == ("sd_rel_small", "sd_rel_eager", "sd_rel_rendezvous")
        else:
            assert "sd_rel_pp_small" in names and "sd_rel_bw_rendezvous" in names


def test_data_must_be_a_table_or_tables(tmp_path: Path) -> None:
    head = _head("bad").replace("seed = 3\n", 'seed = 3\ndata = "pp.csv"\n')
    raw = read_toml_text(tmp_path, head + TAIL)
    with pytest.raises(CampaignError, match=r"a \[data\] table or one or more \[\[data\]\] tables"):
        parse_campaign(raw, base_dir=tmp_path)


def read_toml_text(folder: Path, text: str) -> dict[str, object]:
    path = folder / "c.toml"
    path.write_text(text)
    return read_toml(path)


@pytest.mark.parametrize(
    ("variants", "key", "match"),
    [
        (
            '[[variants]]\nname = "v"\nfixed = { regime1_max_bytes = 100 }\n',
            "variants[0].fixed.regime1_max_bytes",
            "above the previous regime's 1024",
        ),
        (
            '[[variants]]\nname = "v"\nfixed = { link_bw_GBps = 3.0 }\n',
            "variants[0].fixed.link_bw_GBps",
            "not a calibrated parameter",
        ),
        (
            '[[variants]]\nname = "no discrepancy"\nfixed = { small_max_bytes = 512 }\n',
            "variants[0].name",
            "a non-empty name other than",
        ),
        (
            '[[variants]]\nname = "v"\nfixed = { regime7_max_bytes = 512 }\n',
            "variants[0].fixed.regime7_max_bytes",
            "a slot of one of the 3 regimes",
        ),
    ],
)
def test_bad_variants_name_key_value_and_what_is_allowed(
    tmp_path: Path, variants: str, key: str, match: str
) -> None:
    raw = read_toml_text(tmp_path, _head("bad") + PINGPONG + TAIL + variants)
    with pytest.raises(CampaignError, match=match) as err:
        parse_campaign(raw, base_dir=tmp_path)
    assert err.value.key == key
