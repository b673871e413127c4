"""Settings inside their valid types but impossible in size are refused before any allocation,
with the estimate in the message; the closed-form sizes behind the estimates are exact."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mpiuq.calibration.config import parse_campaign
from mpiuq.calibration.errors import CampaignError
from mpiuq.calibration.pipeline.budget import (
    benchmark_program_ops,
    check_benchmark_budget,
    check_campaign_budget,
)
from mpiuq.main import main
from mpiuq.simulator.benchmarks.run import BenchmarkSetup, benchmark_program
from mpiuq.surrogate import ParameterBox, fit_pce, make_executor, random_design
from mpiuq.surrogate.budget import (
    ENV_MEMORY_GB,
    ENV_MODEL_WORK,
    ENV_SURROGATE_EVALUATIONS,
    default_budget,
    machine_memory_bytes,
    sparse_grid_size,
)
from mpiuq.surrogate.design.designs import sparse_grid_unit
from mpiuq.surrogate.errors import BudgetError, SurrogateInputError

CAMPAIGN: dict[str, Any] = {
    "name": "b",
    "seed": 1,
    "simulator": {"benchmark": "pingpong"},
    "parameters": {
        "post_header_delay_us": [0.1, 3.0],
        "link_bw_GBps": [3.0, 8.0],
        "memory_bw_GBps": [2.0, 25.0],
        "injection_bw_GBps": [3.0, 8.0],
        "post_rdma_delay_us": [0.05, 3.0],
        "rdma_pin_latency_us": [0.2, 10.0],
        "rdma_pin_per_page_ns": [1.0, 100.0],
    },
    "data": {"path": "d.csv", "benchmark": "pingpong_half_rtt", "sizes_per_protocol": 6},
    "surrogate": {"level": 4, "order": 4},
    "calibration": {"walkers": 32, "ensembles": 4, "steps": 500, "burn": 500, "max_steps": 10000},
}


def campaign_with(tmp_path: Path, **changes: Any) -> Any:
    raw = copy.deepcopy(CAMPAIGN)
    for dotted, value in changes.items():
        table, key = dotted.split("__")
        raw.setdefault(table, {})[key] = value
    return parse_campaign(raw, tmp_path)


@pytest.mark.parametrize(
    ("dim", "level"), [(1, 0), (1, 5), (2, 1), (2, 4), (3, 3), (4, 2), (5, 3), (7, 3)]
)
def test_sparse_grid_size_closed_form_matches_the_grid(dim: int, level: int) -> None:
    assert sparse_grid_size(dim, level) == sparse_grid_unit(dim, level).shape[0]


def test_sparse_grid_sizes_of_the_paper() -> None:
    # 7-D levels 3 and 4: 589 and 2465 nodes (appendix of the reference paper)
    assert (sparse_grid_size(7, 3), sparse_grid_size(7, 4)) == (589, 2465)


@pytest.mark.parametrize(
    ("benchmark", "window"), [("pingpong", 64), ("stream", 1), ("stream", 7), ("stream", 64)]
)
def test_benchmark_operation_count_matches_the_program(benchmark: str, window: int) -> None:
    program = benchmark_program(BenchmarkSetup(benchmark, window), 1024)
    assert benchmark_program_ops(benchmark, window) == program.n_ops


def test_the_paper_campaign_fits_the_default_budget(tmp_path: Path) -> None:
    check_campaign_budget(campaign_with(tmp_path))


@pytest.mark.parametrize(
    ("change", "pattern"),
    [
        (
            {"calibration__ensembles": 2**31},
            r"MCMC needs about .* of memory .*ensembles = 2147483648",
        ),
        (
            {"calibration__max_steps": 10**18, "calibration__target_ess": 1e7},
            r"MCMC needs about .* of memory .*max_steps = 1000000000000000000",
        ),
        (
            {"exact__draws": 10**6, "exact__move_steps": 10**5},
            r"simulator runs needs about .* \(up to 1e\+11 parameter sets",
        ),
        (
            {"calibration__predictive_draws": 10**12},
            r"simulator runs needs about .* units of model work \(up to 1e\+12 parameter sets",
        ),
        ({"calibration__walkers": 10**6}, r"MCMC needs about .*walkers = 1000000"),
        (
            {"surrogate__level": 8, "surrogate__order": 10},
            r"surrogate fit needs about .* 287745 design points x 19448 terms",
        ),
        (
            {"simulator__benchmark": "stream", "simulator__window": 10**9},
            r"stream benchmark with window 1000000000 needs about",
        ),
        (
            {"simulator__benchmark": "stream", "simulator__window": 10**5},
            r"window 100000 needs about 1.8e\+11 units of model work",
        ),
    ],
)
def test_absurd_campaigns_are_refused_with_the_estimate(
    tmp_path: Path, change: dict[str, Any], pattern: str
) -> None:
    with pytest.raises(BudgetError, match=pattern) as info:
        check_campaign_budget(campaign_with(tmp_path, **change))
    assert info.value.needed > info.value.limit > 0


def test_evaluation_count_is_checked_when_memory_allows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_MEMORY_GB, "1000")
    with pytest.raises(
        BudgetError, match=r"needs up to 2.69e\+09 surrogate evaluations .*up to 7 sampling run"
    ):
        check_campaign_budget(campaign_with(tmp_path, calibration__max_steps=3 * 10**6))


def test_order_too_high_for_the_design_names_the_largest_order(tmp_path: Path) -> None:
    with pytest.raises(
        CampaignError, match=r"'surrogate.order' = 5 .*at most 2 for surrogate.level = 2"
    ):
        check_campaign_budget(campaign_with(tmp_path, surrogate__level=2, surrogate__order=5))


def test_budget_defaults_and_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (ENV_MEMORY_GB, ENV_MODEL_WORK, ENV_SURROGATE_EVALUATIONS):
        monkeypatch.delenv(name, raising=False)
    b = default_budget()
    assert b.memory_bytes == pytest.approx(0.5 * machine_memory_bytes())
    assert (b.model_work, b.surrogate_evaluations) == (1e11, 1e9)
    monkeypatch.setenv(ENV_MEMORY_GB, "0.5")
    monkeypatch.setenv(ENV_SURROGATE_EVALUATIONS, "1e12")
    b = default_budget()
    assert b.memory_bytes == 2**29 and b.surrogate_evaluations == 1e12
    assert ENV_MEMORY_GB in b.memory_source
    monkeypatch.setenv(ENV_MODEL_WORK, "lots")
    with pytest.raises(SurrogateInputError, match=r"MPIUQ_MAX_MODEL_WORK='lots' is invalid"):
        default_budget()


def test_an_override_lets_a_legitimate_large_run_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = campaign_with(tmp_path, calibration__max_steps=3 * 10**6)
    with pytest.raises(BudgetError, match="of memory"):
        check_campaign_budget(big)
    monkeypatch.setenv(ENV_MEMORY_GB, "1000")
    monkeypatch.setenv(ENV_SURROGATE_EVALUATIONS, "1e11")
    check_campaign_budget(big)


def test_surrogate_layer_checks_before_allocating() -> None:
    with pytest.raises(
        BudgetError,
        match=r"level-20 sparse grid in 10 dimensions needs about .*\(862939234305 nodes",
    ):
        sparse_grid_unit(10, 20)
    box = ParameterBox.from_bounds({"a": (0.0, 1.0)})
    with pytest.raises(BudgetError, match="random design of 100000000000 points"):
        random_design(box, 10**11, 0)
    x = np.linspace(0.0, 1.0, 200_000)[:, None]
    with pytest.raises(BudgetError, match=r"fitting an order-199999 chaos \(200000 terms\)"):
        fit_pce(np.vstack([x, x[:1]]), np.zeros(x.shape[0] + 1), box, 199_999)
    with pytest.raises(BudgetError, match="100000 local worker processes"):
        make_executor(100_000)


def test_benchmark_budget_for_simulate(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(BudgetError, match="window 1000000000"):
        check_benchmark_budget("stream", 10**9, 1)
    check_benchmark_budget("stream", 64, 18, n_sets=2465)
    code = main(["simulate", "--benchmark", "stream", "--sizes", "1", "--window", str(10**9)])
    err = capsys.readouterr().err
    assert code == 2 and "needs about 4.6 TiB of memory" in err
    code = main(["simulate", "--sizes", "1,2", "--replicas", str(10**12), "--csv", "x.csv"])
    assert code == 2 and "1000000000000 synthetic replicas of 2 sizes" in capsys.readouterr().err


def test_surrogate_cli_refuses_absurd_designs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    params = [a for k in "abcdefghij" for a in ("--param", f"{k}=0:1")]
    code = main(["surrogate", "design", *params, "--level", "20", "--csv", str(tmp_path / "d.csv")])
    err = capsys.readouterr().err
    assert (
        code == 2
        and "level-20 sparse grid in 10 dimensions" in err
        and "MPIUQ_MEMORY_LIMIT_GB" in err
    )
    assert not (tmp_path / "d.csv").exists()


def test_walkers_must_cover_the_discrepancy_terms_too(tmp_path: Path) -> None:
    c = campaign_with(
        tmp_path,
        calibration__walkers=14,
        discrepancy__model="regime",
        discrepancy__sd_rel=0.2,
    )
    with pytest.raises(CampaignError, match=r"'calibration.walkers' = 14 .*2 x \(7 \+ 3\) = 20"):
        check_campaign_budget(c)
