"""Reference counting in the event loop: numba's NRT increfs/decrefs left in its machine
code, and what they cost, for three builds of :func:`~mpiuq.simulator.kernel.loop.event_loop`:

* ``as shipped``: the loop as the package compiles it (loaded from numba's cache);
* ``counted``: the loop's source compiled with numba's defaults (reference counting on,
  no borrowing): every bundle passed to an inlined helper, unpacked or read increfs
  and decrefs each array inside it;
* ``borrowed``: the same source compiled with its argument bundles first passed through
  :func:`mpiuq.simulator.runtime.jit.borrowed` (a shipped loop that borrows already counts
  nothing; this shows the step on its own).

For each: the calls to ``NRT_incref`` and ``NRT_decref`` in the optimised LLVM IR of the
loop's own function (``dispatcher.inspect_llvm()``), and the CPU seconds of the
simulation of a shared trace under the analytic model (best and median of
``--repeat``, ``time.process_time``), whose outputs must equal the shipped loop's bit
for bit. The two source builds compile here and are not cached: the ``counted`` one
is the slow one (numba's pruning pass works through thousands of reference-count
updates; on a 2-core machine with a load average of 20 it had not finished after 40
minutes), so run this on an idle machine.

Usage::

    python experiments/perf/perf_refcounts.py [--trace ti_lulesh_512r] [--repeat 5]
        [--shipped-only]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "traces"


def nrt_calls(dispatcher: Any, name: str) -> tuple[int, int]:
    """``(increfs, decrefs)`` called by the function ``name`` in ``dispatcher``'s IR."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ir: str = dispatcher.inspect_llvm(dispatcher.signatures[0])
    if caught:  # numba: "Inspection disabled for cached code"
        raise LookupError(str(caught[0].message))
    body, inside = [], False
    for line in ir.splitlines():
        if line.startswith("define") and name in line and "cpython" not in line:
            inside = True
        elif inside and line.startswith("}"):
            break
        elif inside:
            body.append(line)
    text = "\n".join(body)
    return len(re.findall(r"call void @NRT_incref", text)), len(
        re.findall(r"call void @NRT_decref", text)
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--trace", default="ti_lulesh_512r")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument(
        "--shipped-only", action="store_true", help="time the loop as shipped only (no compile)"
    )
    args = ap.parse_args()

    import numba

    from mpiuq.simulator import kernel
    from mpiuq.simulator.engine import params_vector, program_arrays
    from mpiuq.simulator.kernel.loop import LOOP_CTL, event_loop
    from mpiuq.simulator.kernel.run import _start, outputs
    from mpiuq.simulator.lowering.lower import lower_trace
    from mpiuq.simulator.networks import AnalyticNetwork, network_arrays
    from mpiuq.simulator.parameters import SimParams
    from mpiuq.simulator.runtime.borrow import borrowed
    from mpiuq.simulator.trace import read_trace

    one, five, _ = os.getloadavg()
    print(f"machine: {os.cpu_count()} CPUs, load average {one:.2f} (1 min) {five:.2f} (5 min)")
    trace = read_trace(DATA / args.trace)
    program = lower_trace(trace).program
    prog = program_arrays(program)
    net = network_arrays(AnalyticNetwork(), program.n_ranks, None)
    vector = params_vector(SimParams())

    source = event_loop.py_func
    opts = {"nogil": True, "error_model": "numpy"}
    counted = numba.njit(**opts)(source)
    inner = numba.njit(inline="always", **opts)(source)

    @numba.njit(**opts)  # type: ignore[misc]
    def borrowing(prog, net, state, rates, ep, compute_scale, ctl, ctl_t):  # type: ignore[no-untyped-def]
        return inner(
            borrowed(prog), borrowed(net), borrowed(state), rates, borrowed(ep),
            compute_scale, ctl, ctl_t,
        )  # fmt: skip

    def driver(loop: Any) -> Any:
        @numba.njit(**opts)  # type: ignore[misc]
        def run(program, params, net, compute_scale, state):  # type: ignore[no-untyped-def]
            rates, ep = _start(program, params, net, state)
            ctl = np.zeros(LOOP_CTL, np.int64)
            ctl_t = np.zeros(1, np.float64)
            loop(program, net, state, rates, ep, compute_scale, ctl, ctl_t)
            return outputs(state, ctl[3])

        return run

    builds = {"as shipped": event_loop, "counted": counted, "borrowed": borrowing}
    if args.shipped_only:
        builds = {"as shipped": event_loop}
    reference = None
    print(f"{args.trace}, analytic model: CPU s of the simulation, best (median) of {args.repeat}")
    for name, loop in builds.items():
        run = driver(loop)
        t0 = time.process_time()
        out = run(prog, vector, net, 1.0, kernel.state_for(prog, net))
        first = time.process_time() - t0
        times = []
        for _ in range(args.repeat):
            state = kernel.state_for(prog, net)
            t0 = time.process_time()
            out = run(prog, vector, net, 1.0, state)
            times.append(time.process_time() - t0)
        flat = [np.asarray(x) for x in out]
        if reference is None:
            reference = flat
        same = all(
            np.array_equal(a, b, equal_nan=True) for a, b in zip(flat, reference, strict=True)
        )
        try:
            inc, dec = nrt_calls(loop, loop.py_func.__name__)
            calls = f"NRT_incref calls {inc:>5}  NRT_decref calls {dec:>5}"
        except LookupError:  # a loop loaded from numba's cache keeps no LLVM IR
            calls = f"{'(IR not kept by numba for a cached loop)':<46}"
        print(
            f"  {name:<11} {calls}  "
            f"CPU {min(times):.3f} s ({statistics.median(times):.3f})  "
            f"first call {first:.1f} s  events {int(out[4])} "
            f"({int(out[4]) / min(times) / 1e6:.1f} M events per CPU second)  "
            f"{'identical' if same else 'DIFFERENT'}",
            flush=True,
        )
    one, five, _ = os.getloadavg()
    print(f"load average at the end: {one:.2f} (1 min) {five:.2f} (5 min)")


if __name__ == "__main__":
    main()
