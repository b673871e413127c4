"""Max-min fair shares of the flow network against closed forms and an independent solver.

Closed forms (capacities C, flows sharing links): two flows on one link get C/2 each;
on a chain of links of different capacities the narrowest link is shared first and the
rest goes to the flows it does not limit; with sharing penalties ``p_i`` flows on one
link get ``x_i = C (1/p_i) / sum_j (1/p_j)``; a flow whose bound is below its fair
share gets its bound and the others share the rest. The incremental engine (quick
paths, pending recomputations of components) is checked against a from-scratch
progressive filling written here in plain Python, on random joins and leaves.
"""

from __future__ import annotations

import numpy as np
import pytest

from mpiuq.simulator.kernel.state import new_state
from mpiuq.simulator.networks.flow_share import (
    CTR_PENDING,
    flow_join,
    flow_leave,
    recompute_pending,
)

N_ENTRIES = 4


def make_flows(caps: list[float], n_slots: int = 8):  # type: ignore[no-untyped-def]
    """A flow state of ``len(caps)`` links of those capacities and ``n_slots`` flows."""
    st = new_state(1, n_slots, 1, 0, 1, len(caps), 0, 4, N_ENTRIES, np.zeros(2, np.int64))
    fl = st.network.flow
    fl.cap[:] = caps
    return fl


def put(fl, m: int, links: dict[int, float], *, penalty: float = 1.0, bound: float = 1e30,
        nbytes: float = 1e9) -> None:  # fmt: skip
    """Describe flow ``m``: its links and weights, penalty, bound, bytes."""
    fl.n_ent[m] = len(links)
    for e, (c, w) in enumerate(links.items()):
        fl.cnst[m, e] = c
        fl.weight[m, e] = w
    fl.penalty[m] = penalty
    fl.bound[m] = bound
    fl.factor[m] = 1.0
    fl.rem[m] = nbytes


def settle(fl, n: int, t: float = 0.0) -> None:
    """Finish what a join or leave left pending (the kernel's recomputation event)."""
    if n < 0 or fl.ctr[CTR_PENDING] > 0:
        recompute_pending(t, fl)


def join(fl, m: int, t: float = 0.0) -> None:
    settle(fl, flow_join(m, t, fl), t)


def leave(fl, m: int, t: float = 0.0) -> None:
    settle(fl, flow_leave(m, t, fl), t)


def test_two_flows_on_one_link_get_half_each() -> None:
    fl = make_flows([10.0])
    put(fl, 0, {0: 1.0}, bound=10.0)
    put(fl, 1, {0: 1.0}, bound=10.0)
    join(fl, 0)
    assert fl.value[0] == pytest.approx(10.0)  # alone: its bound, the link's capacity
    join(fl, 1)
    assert (fl.value[0], fl.value[1]) == pytest.approx((5.0, 5.0))
    leave(fl, 0)
    assert fl.value[1] == pytest.approx(10.0)


def test_chain_of_links_of_different_capacities() -> None:
    # link 0 (10) carries f0 and f1, link 1 (4) carries f1 and f2: link 1 saturates
    # first at 2 each, f0 takes what is left of link 0
    fl = make_flows([10.0, 4.0])
    put(fl, 0, {0: 1.0}, bound=10.0)
    put(fl, 1, {0: 1.0, 1: 1.0}, bound=4.0)
    put(fl, 2, {1: 1.0}, bound=4.0)
    for m in range(3):
        join(fl, m)
    assert fl.value[:3] == pytest.approx([8.0, 2.0, 2.0])
    assert fl.load[:2] == pytest.approx([10.0, 4.0])


def test_parking_lot() -> None:
    # a long flow over links of capacity 1, 2, 3 and one short flow per link
    fl = make_flows([1.0, 2.0, 3.0])
    put(fl, 0, {0: 1.0, 1: 1.0, 2: 1.0}, bound=1.0)
    for i in range(3):
        put(fl, 1 + i, {i: 1.0}, bound=float(i + 1))
    for m in range(4):
        join(fl, m)
    assert fl.value[:4] == pytest.approx([0.5, 0.5, 1.5, 2.5])


def test_penalties_weight_the_shares() -> None:
    fl = make_flows([12.0])
    put(fl, 0, {0: 1.0}, penalty=1.0, bound=12.0)
    put(fl, 1, {0: 1.0}, penalty=2.0, bound=12.0)
    join(fl, 0)
    join(fl, 1)
    assert (fl.value[0], fl.value[1]) == pytest.approx((8.0, 4.0))


def test_bound_below_fair_share() -> None:
    fl = make_flows([10.0])
    put(fl, 0, {0: 1.0}, bound=3.0)
    put(fl, 1, {0: 1.0}, bound=10.0)
    join(fl, 1)
    join(fl, 0)
    assert (fl.value[0], fl.value[1]) == pytest.approx((3.0, 7.0))


def test_reverse_route_weight_counts_in_the_load() -> None:
    # f1 loads link 0 with weight 0.05 (its reverse route): equal shares 10 / 1.05
    fl = make_flows([10.0, 100.0])
    put(fl, 0, {0: 1.0}, bound=10.0)
    put(fl, 1, {0: 0.05, 1: 1.0}, bound=100.0)
    join(fl, 0)
    join(fl, 1)
    assert fl.value[:2] == pytest.approx([10 / 1.05, 10 / 1.05])
    assert fl.load[0] == pytest.approx(10.0)


def test_rates_follow_the_bandwidth_factor_and_ends_are_scheduled() -> None:
    fl = make_flows([10.0])
    put(fl, 0, {0: 1.0}, bound=10.0, nbytes=20.0)
    fl.factor[0] = 0.5
    join(fl, 0, t=1.0)
    assert fl.rate[0] == pytest.approx(5.0)
    assert fl.t_done[0] == pytest.approx(1.0 + 20.0 / 5.0)


def reference_shares(
    caps: np.ndarray, flows: dict[int, tuple[dict[int, float], float, float]]
) -> dict[int, float]:
    """Weighted max-min with bounds by progressive filling, from scratch (plain Python)."""
    rem = {c: float(v) for c, v in enumerate(caps)}
    left = dict(flows)
    out: dict[int, float] = {}
    while left:
        usage = dict.fromkeys(rem, 0.0)
        for links, pen, _b in left.values():
            for c, w in links.items():
                usage[c] += w / pen
        levels = {c: rem[c] / usage[c] for c in rem if usage[c] > 0}
        level = min(levels.values())
        tied = {c for c, v in levels.items() if v <= level * (1 + 1e-12)}
        on = [f for f, (links, _p, _b) in left.items() if tied & set(links)]
        by_bound = [f for f in on if left[f][2] * left[f][1] < level]
        if by_bound:
            low = min(left[f][2] * left[f][1] for f in by_bound)
            fix = {f: left[f][2] for f in by_bound if left[f][2] * left[f][1] <= low * (1 + 1e-12)}
        else:
            fix = {f: level / left[f][1] for f in on}
        for f, x in fix.items():
            for c, w in left[f][0].items():
                rem[c] -= w * x
            out[f] = x
            del left[f]
    return out


@pytest.mark.parametrize("seed", range(6))
def test_incremental_shares_equal_a_fresh_solution(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_links, n_slots = 6, 24
    caps = rng.uniform(1.0, 10.0, n_links)
    fl = make_flows(list(caps), n_slots)
    active: dict[int, tuple[dict[int, float], float, float]] = {}
    for step in range(60):
        idle = [m for m in range(n_slots) if m not in active]
        if idle and (not active or rng.random() < 0.6):
            m = int(rng.choice(idle))
            links = {int(c): 1.0 for c in rng.choice(n_links, rng.integers(1, 4), replace=False)}
            if rng.random() < 0.3:  # a reverse-route link (merged with a route link)
                c = int(rng.integers(n_links))
                links[c] = links.get(c, 0.0) + 0.05
            pen = float(rng.choice([1.0, 1.0, 2.0, 3.5]))
            bound = float(min(caps[c] for c in links)) * float(rng.choice([1.0, 1.0, 0.3]))
            put(fl, m, links, penalty=pen, bound=bound)
            active[m] = (links, pen, bound)
            n = flow_join(m, float(step), fl)
        else:
            m = int(rng.choice(list(active)))
            del active[m]
            n = flow_leave(m, float(step), fl)
        if rng.random() < 0.7 or step == 59:  # sometimes several changes share an instant
            settle(fl, n, float(step))
            if fl.ctr[CTR_PENDING] == 0:
                want = reference_shares(caps, active)
                got = {m: float(fl.value[m]) for m in active}
                for m, x in want.items():
                    assert got[m] == pytest.approx(x, rel=1e-9, abs=1e-12), (step, m)
