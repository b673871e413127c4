"""Bit-identity check of the engine across a refactoring: dump results, then compare.

Dumps, for the shared traces ``ti_lulesh_64r``, ``ti_nas_mg_A_64r``, ``ti_nekbone_16r``,
``otf2_tracer_stencil4d_64r`` and ``gen_dumpi_lulesh_8r``, under the analytic (no
topology and on a dragonfly), compute-only and packet (minimal routing on a dragonfly
and on a fat-tree; Valiant on both, kept apart) models: end times, the four-part
decomposition per rank, the per-call splits, marks, event counts, matched receives
and link bytes. For the benchmarks: ``evaluate_batch`` times of ``pingpong`` and
``stream`` for 20 random parameter sets over 18 sizes, and ``simulate_benchmark``
decompositions for three of them.

Usage::

    python experiments/checks/kernel_identity.py dump OUT.npz
    python experiments/checks/kernel_identity.py compare BASELINE.npz NEW.npz

``compare`` prints every array that differs in any bit (``valiant/`` arrays are
reported apart: the Valiant routing rule changed on purpose) and exits 1 if any
other array differs. Uses only the public API, so it runs on old and new trees.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "traces"
TRACES = (
    "ti_lulesh_64r",
    "ti_nas_mg_A_64r",
    "ti_nekbone_16r",
    "otf2_tracer_stencil4d_64r",
    "gen_dumpi_lulesh_8r",
)
N_SETS = 20
SIZES = tuple(int(s) for s in np.unique(np.logspace(0, 21, 18, base=2).astype(int)))


def _topologies(n_ranks: int) -> dict[str, object]:
    try:
        from mpiuq.simulator.topologies import topology_for_ranks
    except ImportError:  # the tree before topology.py moved into topologies/
        from mpiuq.simulator.topology import topology_for_ranks  # type: ignore[no-redef]
    return {
        "dragonfly": topology_for_ranks("dragonfly", n_ranks),
        "fattree": topology_for_ranks("fattree", n_ranks),
    }


def _runs(name: str) -> dict[str, np.ndarray]:
    from mpiuq.simulator.engine import simulate
    try:
        from mpiuq.simulator.lowering.lower import lower_trace
    except ImportError:  # the tree before simulator/'s modules moved into packages
        from mpiuq.simulator.lowering import lower_trace  # type: ignore[no-redef]

    try:
        from mpiuq.simulator.networks import AnalyticNetwork, ComputeOnly, PacketNetwork
    except ImportError:  # the tree before network.py became networks/
        from mpiuq.simulator.network import (  # type: ignore[no-redef]
            AnalyticNetwork,
            ComputeOnly,
            PacketNetwork,
        )
    from mpiuq.simulator.parameters import SimParams
    from mpiuq.simulator.placement import place_ranks
    try:
        from mpiuq.simulator.replay.setup import ReplaySetup
    except ImportError:  # the tree before simulator/'s modules moved into packages
        from mpiuq.simulator.replay import ReplaySetup  # type: ignore[no-redef]
    from mpiuq.simulator.trace import read_trace

    trace = read_trace(DATA / name)
    params = SimParams()
    low = lower_trace(trace, ReplaySetup(compute_scale=0.5).lowering_options(params))
    topos = _topologies(trace.n_ranks)
    models: dict[str, tuple[object, np.ndarray | None]] = {
        "analytic": (AnalyticNetwork(), None),
        "compute-only": (ComputeOnly(), None),
    }
    for tname, topo in topos.items():
        nodes = place_ranks(trace.n_ranks, topo, "linear")  # type: ignore[arg-type]
        models[f"analytic-{tname}"] = (AnalyticNetwork(topology=topo), nodes)  # type: ignore[arg-type]
        models[f"packet-{tname}"] = (PacketNetwork(topology=topo), nodes)  # type: ignore[arg-type]
        models[f"packet-{tname}-rr"] = (
            PacketNetwork(topology=topo, packet_bytes=1024),  # type: ignore[arg-type]
            place_ranks(trace.n_ranks, topo, "round-robin"),  # type: ignore[arg-type]
        )
        try:
            valiant = PacketNetwork(topology=topo, routing="valiant", seed=3)  # type: ignore[arg-type]
        except ValueError:  # SettingError: no Valiant intermediates (dragonfly of 2 groups)
            continue
        models[f"valiant/packet-{tname}"] = (valiant, nodes)
    out: dict[str, np.ndarray] = {}
    for mname, (net, nodes) in models.items():
        for scale in (1.0, 0.1):
            run = simulate(low.program, params, net, node_of_rank=nodes, compute_scale=scale)  # type: ignore[arg-type]
            valiant = mname.startswith("valiant/")
            key = f"{'valiant/' if valiant else ''}{name}/{mname.removeprefix('valiant/')}/x{scale}"
            out[f"{key}/end_s"] = run.end_s
            out[f"{key}/parts_s"] = run.parts_s
            out[f"{key}/per_call_s"] = run.per_call_s
            out[f"{key}/marks_s"] = run.marks_s
            out[f"{key}/n_events"] = np.array([run.n_events])
            out[f"{key}/matched_recv"] = run.matched_recv.astype(np.int64)  # dumps of before int32
            out[f"{key}/link_bytes"] = run.link_bytes
            out[f"{key}/unmatched"] = np.array(run.unmatched_sends, dtype=np.int64).reshape(-1, 2)
    return out


def _benchmarks() -> dict[str, np.ndarray]:
    try:
        from mpiuq.simulator.benchmarks.run import (
            BenchmarkSetup,
            evaluate_batch,
            simulate_benchmark,
        )
    except ImportError:  # the tree before simulator/'s modules moved into packages
        from mpiuq.simulator.benchmarks import (
            BenchmarkSetup,
            evaluate_batch,
            simulate_benchmark,
        )
    from mpiuq.simulator.parameters import TABLE1_PRIOR_RANGES, SimParams, params_matrix

    rng = np.random.default_rng(20240611)
    names = tuple(TABLE1_PRIOR_RANGES)
    x = np.column_stack([rng.uniform(lo, hi, N_SETS) for lo, hi in TABLE1_PRIOR_RANGES.values()])
    matrix = params_matrix(SimParams(), names, x)
    out: dict[str, np.ndarray] = {}
    for bench in ("pingpong", "stream"):
        for window in (64, 7):
            setup = BenchmarkSetup(bench, window=window)
            batch = evaluate_batch(setup, SIZES, matrix)
            out[f"bench/{bench}/w{window}/time_us"] = batch.time_us
            out[f"bench/{bench}/w{window}/throughput_MBps"] = batch.throughput_MBps
            out[f"bench/{bench}/w{window}/n_events"] = np.array([batch.n_events])
        for i in range(3):
            params = SimParams.from_mapping(dict(zip(names, x[i], strict=True)))
            res = simulate_benchmark(bench, SIZES, params, window=16, repetitions=2)
            out[f"bench/{bench}/single{i}/time_us"] = res.time_us
            out[f"bench/{bench}/single{i}/decomposition"] = np.array(
                [[list(d.as_dict().values()) for d in pair] for pair in res.decomposition]
            )
    return out


def dump(path: Path) -> None:
    """Write every result array to ``path`` (npz)."""
    arrays: dict[str, np.ndarray] = {}
    for name in TRACES:
        if not (DATA / name).is_dir():
            raise SystemExit(f"trace {name} not found under {DATA}")
        arrays.update(_runs(name))
        print(f"{name}: done")
    arrays.update(_benchmarks())
    np.savez_compressed(path, **arrays)  # type: ignore[arg-type]
    print(f"{len(arrays)} arrays -> {path}")


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return bool(np.array_equal(a.view(np.uint8), b.view(np.uint8))) if a.size else True


def compare(base_path: Path, new_path: Path) -> int:
    """Print the differing arrays; return 1 if a non-Valiant array differs."""
    base = np.load(base_path)
    new = np.load(new_path)
    unpaired = sorted(set(base.files) ^ set(new.files))
    missing = [k for k in unpaired if not k.startswith("valiant/")]
    bad = [k for k in sorted(set(base.files) & set(new.files)) if not _same(base[k], new[k])]
    for k in unpaired:
        tag = "(Valiant no longer applies)" if k.startswith("valiant/") else ""
        print(f"only in one file: {k} {tag}")
    strict = [k for k in bad if not k.startswith("valiant/")]
    for k in bad:
        tag = "expected (Valiant rule)" if k.startswith("valiant/") else "DIFFERS"
        print(f"{tag}: {k}")
    n = len(set(base.files) & set(new.files))
    print(
        f"{n} arrays compared: {n - len(bad)} bit-identical, {len(strict)} differ outside "
        f"Valiant, {len(bad) - len(strict)} Valiant arrays differ, {len(unpaired)} unpaired "
        f"({len(missing)} outside Valiant)"
    )
    return 1 if strict or missing else 0


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "dump":
        dump(Path(sys.argv[2]))
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        raise SystemExit(compare(Path(sys.argv[2]), Path(sys.argv[3])))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
