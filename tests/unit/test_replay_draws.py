"""Replay of many parameter sets: one lowering, the batch path, executors, summaries.

The reference of every draw is an independent ``replay`` of that draw alone (its own
lowering at its own reduction rate, ``simulate``): the batch path must give the same
numbers bit for bit, whatever the chunking and the executor (in process or Dask on
loopback), since every set runs the same compiled code on a reset state.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_replay_lowering import builder, mixed_trace

from mpiuq.calibration.reporting.propagation import (
    decomposition_summary,
    draw_summary,
    paired_speedup,
)
from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.lowering.lower import LoweringOptions, lower_trace
from mpiuq.simulator.parameters import SimParams
from mpiuq.simulator.replay.draws import DrawDeadlockError, replay_draws
from mpiuq.simulator.replay.run import ReplaySetup, replay
from mpiuq.simulator.trace.ir import OpKind
from mpiuq.surrogate.executors import DaskExecutor

#: Draws differing in every calibrated parameter (memory bandwidth re-rates reductions).
DRAWS = [
    SimParams().with_values(
        link_bw_GBps=5.0 + k,
        injection_bw_GBps=6.0 + 0.5 * k,
        memory_bw_GBps=4.0 + 3.0 * k,
        post_header_delay_us=0.5 + 0.2 * k,
        rdma_pin_latency_us=1.0 + 0.3 * k,
    )
    for k in range(4)
]


def _as_arrays(setup: ReplaySetup) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per model: simulated time, parts and per-call parts of separate replays per draw."""
    out: dict[str, list[tuple[float, np.ndarray, np.ndarray]]] = {m: [] for m in setup.models}
    for p in DRAWS:
        res = replay(mixed_trace(), p, setup)
        for m in res.models:
            calls = np.array(
                [m.per_call[n].as_dict()[k] for n in m.per_call for k in m.per_call[n].as_dict()]
            )
            out[m.model].append(
                (m.simulated_time_s, m.per_rank_s.sum(axis=0), calls.reshape(-1, 4))
            )
    return {
        k: (
            np.array([a for a, _, _ in v]),
            np.stack([b for _, b, _ in v]),
            np.stack([c for _, _, c in v]),
        )
        for k, v in out.items()
    }


@pytest.mark.parametrize("chunks", [1, 3])
def test_draws_equal_separate_replays_bit_for_bit(chunks: int) -> None:
    setup = ReplaySetup(
        models=("analytic", "compute-only", "packet"), topology="fattree:k=4,levels=2"
    )
    ref = _as_arrays(setup)
    res = replay_draws(mixed_trace(), DRAWS, setup, chunks=chunks)
    for m in res.models:
        t, parts, calls = ref[m.model]
        assert np.array_equal(m.simulated_time_s, t), m.model
        assert np.array_equal(m.parts_s, parts), m.model
        assert np.array_equal(m.per_call_s, calls), m.model
    # the memory bandwidth differs per draw: the reductions' compute differs too
    assert len(set(res.model("analytic").parts_s[:, 0].tolist())) == len(DRAWS)


def test_combine_rows_are_the_reductions_compute() -> None:
    rate = 3e9
    low = lower_trace(mixed_trace(), LoweringOptions(reduce_rate_Bps=rate))
    assert low.reduce_rows.size > 0
    assert np.array_equal(low.program.seconds[low.reduce_rows], low.reduce_bytes / rate)
    assert np.all(low.program.kind[low.reduce_rows] == 0)  # COMPUTE rows
    allreduce = low.program.call_names.index("MPI_Allreduce")
    assert np.all(low.program.call[low.reduce_rows] == allreduce)


def test_draws_identical_in_process_and_through_dask_on_loopback() -> None:
    setup = ReplaySetup(models=("analytic",))
    local = replay_draws(mixed_trace(), DRAWS, setup)
    with DaskExecutor(workers=2, processes=False) as ex:  # TCP on 127.0.0.1
        remote = replay_draws(mixed_trace(), DRAWS, setup, executor=ex, chunks=2)
    a, b = local.model("analytic"), remote.model("analytic")
    assert np.array_equal(a.simulated_time_s, b.simulated_time_s)
    assert np.array_equal(a.parts_s, b.parts_s) and np.array_equal(a.per_call_s, b.per_call_s)


def test_a_set_that_deadlocks_is_named_and_bad_arguments_refused() -> None:
    b, c = builder(2)
    b.add(0, OpKind.RECV, c["MPI_Recv"], peer=1, bytes_recv=8)
    b.add(1, OpKind.RECV, c["MPI_Recv"], peer=0, bytes_recv=8)
    with pytest.raises(DrawDeadlockError, match=r"under 2 parameter set\(s\), the first set 0"):
        replay_draws(b.build(), DRAWS[:2], ReplaySetup(models=("analytic",)))
    with pytest.raises(SettingError, match="draws is empty"):
        replay_draws(mixed_trace(), [], ReplaySetup())
    with pytest.raises(SettingError, match="chunks=0 is invalid"):
        replay_draws(mixed_trace(), DRAWS, ReplaySetup(), chunks=0)


def test_draw_summary_against_hand_values() -> None:
    s = draw_summary(np.arange(1.0, 21.0))  # 20 draws: the 90% HDI spans 18 steps
    assert s["mean"] == 10.5 and s["sd"] == pytest.approx(np.sqrt(35.0))
    assert s["hdi90"][1] - s["hdi90"][0] == 18.0
    assert draw_summary([2.0]) == {"mean": 2.0, "sd": 0.0, "hdi90": [2.0, 2.0], "draws": [2.0]}


def test_paired_speedup_probabilities_and_what_moves() -> None:
    base = np.array([2.0, 2.0, 2.0, 2.0])
    scen = np.array([1.0, 2.0, 1.96, 1.8])  # speed-ups 2, 1, 1.0204, 1.111
    bp = np.tile([1.0, 1.0, 0.0, 0.0], (4, 1))
    sp = bp.copy()
    sp[:, 1] -= base - scen  # only the network part moves
    out = paired_speedup(base, scen, bp, sp)
    assert out["probability"] == {"speedup>1": 0.75, "speedup>1.05": 0.5}
    assert out["speedup"]["draws"] == pytest.approx([2.0, 1.0, 2.0 / 1.96, 2.0 / 1.8])
    assert out["moves"]["network"] == pytest.approx(0.75)  # 3 of 4 draws move, all network
    assert out["moves"]["compute"] == 0.0
    assert out["change_s"]["network_s"]["mean"] == pytest.approx(-np.mean(base - scen))


def test_decomposition_summary_shares_sum_to_one() -> None:
    rng = np.random.default_rng(1)
    parts = rng.uniform(0.1, 1.0, size=(8, 4))
    per_call = np.stack([parts * 0.25, parts * 0.75, np.zeros_like(parts)], axis=1)
    s = decomposition_summary(parts.sum(axis=1), parts, per_call, ("a", "b", "idle"))
    shares = np.array([s["share"][k]["draws"] for k in ("compute", "network", "mpi_stack", "sync")])
    assert np.allclose(shares.sum(axis=0), 1.0, rtol=1e-12)
    assert set(s["per_call"]) == {"a", "b"}  # calls without time are left out
