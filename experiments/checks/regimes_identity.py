"""Bit-for-bit check of the protocol-regime change: benchmark outputs at 20 random parameter
sets and the replay of two shared traces, dumped by one installed mpiuq and compared with
the dump of another (e.g. main's virtualenv against this branch's).

    python experiments/checks/regimes_identity.py dump OUT.npz          # with each version
    python experiments/checks/regimes_identity.py compare A.npz B.npz   # prints the figure

The dump uses only interfaces both versions have (``SimParams`` with scalar names,
``evaluate_batch``, ``replay``), so the default regime table is exercised exactly as a
user of the old version would have.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

SIZES = (1, 3, 7, 20, 54, 146, 158, 400, 1054, 2593, 6798, 17107, 17498, 39686, 87444,
         197051, 440936, 989921)  # fmt: skip
RANGES = {
    "injection_bw_GBps": (3.0, 16.0),
    "link_bw_GBps": (3.0, 16.0),
    "memory_bw_GBps": (2.0, 25.0),
    "post_header_delay_us": (0.1, 3.0),
    "post_rdma_delay_us": (0.05, 3.0),
    "rdma_pin_latency_us": (0.2, 10.0),
    "rdma_pin_per_page_ns": (1.0, 100.0),
}
TRACES = ("gen_dumpi_lulesh_8r", "dumpi_sstdumpi_testtrace_4r")


def dump(out: Path) -> None:
    from mpiuq.simulator.benchmarks.run import BenchmarkSetup, evaluate_batch
    from mpiuq.simulator.parameters import SimParams, params_matrix
    from mpiuq.simulator.replay.run import replay
    from mpiuq.simulator.trace import read_trace

    rng = np.random.default_rng(20261123)
    names = tuple(RANGES)
    x = np.column_stack([rng.uniform(lo, hi, 20) for lo, hi in RANGES.values()])
    base = SimParams(small_max_bytes=150, eager_max_bytes=17408)
    arrays: dict[str, np.ndarray] = {}
    for bench in ("pingpong", "stream"):
        setup = BenchmarkSetup(bench, 16)
        res = evaluate_batch(setup, SIZES, params_matrix(base, names, x))
        arrays[bench] = res.time_us
    traces = Path(__file__).resolve().parents[3] / "shared" / "data" / "traces"
    for k, name in enumerate(TRACES):
        params = SimParams(**dict(zip(names, x[k], strict=True)))
        r = replay(read_trace(traces / name), params)
        for m in r.models:
            arrays[f"{name}:{m.model}"] = np.asarray(m.per_rank_s)
    np.savez(out, **arrays)
    print(f"wrote {out}: {', '.join(sorted(arrays))}")


def compare(a: Path, b: Path) -> int:
    da, db = np.load(a), np.load(b)
    bad = 0
    for key in sorted(set(da.files) | set(db.files)):
        if key not in da.files or key not in db.files:
            print(f"{key}: only in one dump")
            bad += 1
            continue
        same = np.array_equal(da[key], db[key])
        print(f"{key}: {'bit-identical' if same else 'DIFFERENT'} ({da[key].size} values)")
        bad += not same
    print(f"{len(da.files) - bad} of {len(da.files)} arrays bit-identical")
    return int(bad > 0)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "dump":
        dump(Path(sys.argv[2]))
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        sys.exit(compare(Path(sys.argv[2]), Path(sys.argv[3])))
    else:
        sys.exit(__doc__)
