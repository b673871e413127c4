"""The same LULESH runs in DUMPI, OTF2 (dumpi2otf2) and TI (SMPI) agree (FORMATS.md)."""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pytest
from shared_data import TRACES, needs_traces

from mpiuq.simulator.trace import OpKind, read_dumpi, read_otf2, read_ti

DATA = TRACES
pytestmark = needs_traces

_COMPARED = (
    OpKind.ISEND,
    OpKind.IRECV,
    OpKind.WAIT,
    OpKind.WAITALL,
    OpKind.ALLREDUCE,
    OpKind.REDUCE,
    OpKind.BARRIER,
)


def per_rank_counts(t) -> np.ndarray:
    r = t.rank_of_op()
    return np.stack([np.bincount(r[t.kind == k], minlength=t.n_ranks) for k in _COMPARED])


def p2p(t):
    r = t.rank_of_op()
    s = t.kind == OpKind.ISEND
    v = t.kind == OpKind.IRECV
    return (
        Counter(
            zip(
                r[s].tolist(),
                t.peer[s].tolist(),
                t.tag[s].tolist(),
                t.bytes_send[s].tolist(),
                strict=True,
            )
        ),
        Counter(
            zip(
                t.peer[v].tolist(),
                r[v].tolist(),
                t.tag[v].tolist(),
                t.bytes_recv[v].tolist(),
                strict=True,
            )
        ),
    )


@pytest.mark.parametrize("n", [8])  # 27 and 64 ranks: tests/e2e/test_shared_traces_large.py
def test_lulesh_three_formats_agree(n: int) -> None:
    dumpi = read_dumpi(DATA / f"gen_dumpi_lulesh_{n}r")
    otf2 = read_otf2(DATA / f"gen_otf2_lulesh_{n}r")
    ti = read_ti(DATA / f"gen_ti_lulesh_{n}r")
    assert dumpi.n_ranks == otf2.n_ranks == ti.n_ranks == n
    a, b, c = per_rank_counts(dumpi), per_rank_counts(otf2), per_rank_counts(ti)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)
    for t in (dumpi, otf2):
        sends, recvs = p2p(t)
        assert sends == recvs
    assert p2p(dumpi)[0] == p2p(otf2)[0]
    # the same messages (peer, tag, bytes) per rank in the SMPI run
    assert p2p(ti)[0] == p2p(dumpi)[0]
    # DUMPI completes every request (per-id FIFO); dumpi2otf2 lost some Isend completions:
    # exactly the MpiIsend events without an MpiIsendComplete counted in the trace's README
    assert dumpi.summary().n_uncompleted_requests == 0
    assert otf2.summary().n_uncompleted_requests == _isends_never_completed(n)


def _isends_never_completed(n: int) -> int:
    """MpiIsend minus MpiIsendComplete events, from the README of ``gen_otf2_lulesh_{n}r``."""
    text = (DATA / f"gen_otf2_lulesh_{n}r" / "README.md").read_text(encoding="utf-8")
    kinds = re.search(r"OTF2 event kinds \(count\):\*\*(.*)", text)
    assert kinds is not None
    counts = dict(re.findall(r"(\w+) \((\d+)\)", kinds.group(1)))
    return int(counts["MpiIsend"]) - int(counts["MpiIsendComplete"])
