"""One definition of every integer code the compiled loops share (simulator/codes.py).

The AST scan fails if a module of ``simulator/`` or ``cli/`` other than ``codes.py``
assigns an integer literal (or a literal tuple of names) to a name of the code
families, or defines an integer enumeration with literal values; the views
(``program.Op``, network kinds, protocol and link-class names, parameter slots) are
checked against the codes module.
"""

from __future__ import annotations

import ast
import re
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest

from mpiuq.simulator import codes
from mpiuq.simulator.engine import params_vector
from mpiuq.simulator.kernel.run import endpoint_costs, network_rates
from mpiuq.simulator.networks import AnalyticNetwork, ComputeOnly, PacketNetwork
from mpiuq.simulator.parameters import PROTOCOL_NAMES, SimParams
from mpiuq.simulator.program.table import Op
from mpiuq.simulator.regimes import PROTOCOLS, SLOTS
from mpiuq.simulator.topologies import make_topology
from mpiuq.simulator.trace.ir import OpKind

ROOT = Path(__file__).resolve().parents[2]
#: Names of the kernel's code families: an integer assigned to one of these outside
#: codes.py is a copy (the trace readers' own parser tables, under simulator/trace/,
#: use some of the same short prefixes for their private columns and are checked by
#: the two rules below instead).
CODE_NAME = re.compile(
    r"^(OP|K|T|COL|TPL|TRACE|EV|STAGE|CAT|PROTO|NET|ROUTE|VALIANT|LINK|SLOT|P|R|O)_[A-Z0-9_]+$"
    r"|^(N_EV|EV_BITS|N_STAGES|N_CATEGORIES|N_PARAMS|OPS_WIDTH|ANY_SOURCE|ANY_TAG|NO_PEER)$"
)
#: Everywhere: the names codes.py defines, and a trace kind under a kind-like name.
CODES_NAMES = {n for n in dir(codes) if n.isupper()}
KIND_COPY = re.compile(r"^(K|OP|TRACE|KIND)_(" + "|".join(k.name for k in OpKind) + r")$")
#: Name tuples owned by codes.py.
CODE_TUPLES = {
    "CATEGORIES",
    "NETWORK_MODELS",
    "ROUTINGS",
    "LINK_CLASS_NAMES",
    "TABLE_COLUMNS",
    "OP_NAMES",
    "EVENT_NAMES",
    "VALIANT_RULES",
}
#: The trace IR is the source of the trace's kinds and wildcards (codes.py derives from it).
SOURCES = {"simulator/codes.py", "simulator/trace/ir.py"}
#: Copies tolerated in code another piece of work owns (none left: the TI parser's state
#: imports the trace IR's wildcards and kinds). Nothing may be added here.
KNOWN_COPIES: dict[str, set[str]] = {}


def _is_int_literal(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        node = node.operand
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int)
        and not isinstance(node.value, bool)
    )


def _is_literal_tuple(node: ast.expr) -> bool:
    return isinstance(node, ast.Tuple) and all(isinstance(e, ast.Constant) for e in node.elts)


def _is_copy(name: str, value: ast.expr, in_trace: bool) -> bool:
    if name in CODE_TUPLES:
        return _is_literal_tuple(value)
    if not _is_int_literal(value):
        return False
    if name in CODES_NAMES or KIND_COPY.match(name):
        return True
    return not in_trace and CODE_NAME.match(name) is not None


def copies_in(path: Path, rel: str) -> list[str]:
    """``rel:line name`` of every code copy in one module (see the module docstring)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    in_trace = rel.startswith("simulator/trace/")
    found = []

    def check(targets: list[ast.expr], value: ast.expr | None, line: int) -> None:
        if value is None:
            return
        values = value.elts if isinstance(value, ast.Tuple) else [value]
        names = []
        for t in targets:
            if isinstance(t, ast.Name):
                names.append((t.id, value))
            elif isinstance(t, ast.Tuple) and len(t.elts) == len(values):
                names += [
                    (e.id, v)
                    for e, v in zip(t.elts, values, strict=True)
                    if isinstance(e, ast.Name)
                ]
        for name, v in names:
            if _is_copy(name, v, in_trace) and name not in KNOWN_COPIES.get(rel, set()):
                found.append(f"{rel}:{line} {name}")

    for node in tree.body:
        if isinstance(node, ast.Assign):
            check(node.targets, node.value, node.lineno)
        elif isinstance(node, ast.AnnAssign):
            check([node.target], node.value, node.lineno)
        elif isinstance(node, ast.ClassDef):
            enum = any(
                isinstance(b, ast.Name) and b.id in {"IntEnum", "IntFlag", "Enum"}
                for b in node.bases
            )
            for item in node.body:
                if enum and isinstance(item, ast.Assign) and _is_int_literal(item.value):
                    found.append(f"{rel}:{item.lineno} {node.name}.{ast.unparse(item.targets[0])}")
    return found


def test_no_code_is_defined_twice() -> None:
    files = sorted((ROOT / "simulator").rglob("*.py")) + sorted((ROOT / "cli").rglob("*.py"))
    assert len(files) > 50
    rels = [(f, f.relative_to(ROOT).as_posix()) for f in files]
    copies = [hit for f, rel in rels if rel not in SOURCES for hit in copies_in(f, rel)]
    assert copies == []


def test_the_scan_finds_a_copy(tmp_path: Path) -> None:
    """The scan can fail: the copies this project used to have are all found."""
    fake = tmp_path / "copy.py"
    text = (
        "from enum import IntEnum\n"
        "OP_ISEND = 1\n"
        "P_INJ, P_LINK = 0, 1\n"
        "LINK_INJECTION: int = 0\n"
        "NO_PEER = -2\n"
        'ROUTINGS = ("minimal", "valiant")\n'
        "class Op(IntEnum):\n"
        "    COMPUTE = 0\n"
    )
    fake.write_text(text)
    hits = copies_in(fake, "copy.py")
    trace_hits = copies_in(fake, "simulator/trace/copy.py")
    assert [h.split()[-1] for h in hits] == [
        "OP_ISEND",
        "P_INJ",
        "P_LINK",
        "LINK_INJECTION",
        "NO_PEER",
        "ROUTINGS",
        "Op.COMPUTE",
    ]
    # in the trace readers: the names codes.py defines and trace kinds, not other prefixes
    assert [h.split()[-1] for h in trace_hits] == [
        "OP_ISEND",
        "LINK_INJECTION",
        "NO_PEER",
        "ROUTINGS",
        "Op.COMPUTE",
    ]


def test_known_copies_still_exist() -> None:
    """An entry of KNOWN_COPIES whose copy is gone must be removed (the list only shrinks)."""
    for rel, names in KNOWN_COPIES.items():
        path = ROOT / rel
        if not path.is_file():
            continue
        tree = ast.parse(path.read_text())
        assigned = {
            t.id
            for node in tree.body
            if isinstance(node, ast.Assign) and _is_int_literal(node.value)
            for t in node.targets
            if isinstance(t, ast.Name)
        }
        assert names <= assigned, f"{rel}: {sorted(names - assigned)} no longer copied"


def test_views_agree_with_the_codes() -> None:
    assert [m.name for m in Op] == list(codes.OP_NAMES)
    assert all(int(Op[name]) == getattr(codes, f"OP_{name}") for name in codes.OP_NAMES)
    trace_kinds = [n for n in dir(codes) if n.startswith("TRACE_")]
    assert len(trace_kinds) == 9
    assert all(getattr(codes, n) == int(OpKind[n.removeprefix("TRACE_")]) for n in trace_kinds)
    protocols = (codes.PROTO_SMALL, codes.PROTO_EAGER, codes.PROTO_RDV)
    assert [PROTOCOL_NAMES[p] for p in protocols] == ["small", "eager", "rendezvous"]
    every = (*protocols, codes.PROTO_STREAM, codes.PROTO_STREAM_RDV, codes.PROTO_DETACHED)
    assert [PROTOCOLS[p] for p in every] == list(PROTOCOLS)
    topo = make_topology("crossbar:nodes=2")
    for model in (AnalyticNetwork(), ComputeOnly(), PacketNetwork(topo)):
        assert codes.NETWORK_MODELS[model.kind] == model.name
    assert (
        max(getattr(codes, n) for n in dir(codes) if n.startswith("EV_") and n != "EV_BITS")
        < codes.N_EV
    )
    assert len(codes.EVENT_NAMES) <= codes.N_EV


def test_parameter_slots_follow_simparams() -> None:
    names = [f.name for f in fields(SimParams) if f.name != "regimes"]
    assert list(codes.PARAMETER_NAMES) == names and len(names) == codes.N_PARAMS
    slots = {n: getattr(codes, n) for n in dir(codes) if n.startswith("P_")}
    assert sorted(slots.values()) == list(range(len(names)))
    # the regime slots follow the scalars, R_WIDTH per regime, in Regime field order
    regime_slots = {
        n: getattr(codes, n) for n in dir(codes) if n.startswith("R_") and n != "R_WIDTH"
    }
    assert sorted(regime_slots.values()) == list(range(codes.R_WIDTH)) == list(range(len(SLOTS)))
    fields_at = {
        codes.R_MAX_BYTES: "max_bytes",
        codes.R_PROTOCOL: "protocol",
        codes.R_SEND_OVERHEAD: "send_overhead_us",
        codes.R_COPY_BW: "copy_bw_GBps",
        codes.R_SEGMENT_BYTES: "segment_bytes",
        codes.R_SEGMENT_US: "segment_us",
        codes.R_RECV_OVERHEAD: "recv_overhead_us",
        codes.R_UNEXPECTED: "unexpected_us",
        codes.R_SEND_COMPLETE: "send_complete_us",
        codes.R_FRAGMENT: "fragment_bytes",
        codes.R_WIRE_LATENCY: "wire_latency_us",
        codes.R_WIRE_PER_BYTE: "wire_ns_per_byte",
    }
    assert [fields_at[j] for j in range(codes.R_WIDTH)] == list(SLOTS)
    vector = list(SimParams().as_dict())
    assert (
        vector[codes.N_PARAMS + codes.R_WIDTH + codes.R_SEND_OVERHEAD] == "regime1_send_overhead_us"
    )
    assert vector[codes.N_PARAMS + 2 * codes.R_WIDTH + codes.R_SEGMENT_US] == "regime2_segment_us"


@pytest.mark.parametrize("zero_overhead", [False, True])
def test_kernel_reads_each_parameter_from_its_field(zero_overhead: bool) -> None:
    """Distinct values in every field: the kernel's SI costs come from the right ones."""
    p = SimParams(
        injection_bw_GBps=2.0,
        link_bw_GBps=3.0,
        memory_bw_GBps=5.0,
        post_header_delay_us=7.0,
        post_rdma_delay_us=11.0,
        rdma_pin_latency_us=13.0,
        rdma_pin_per_page_ns=17.0,
        hop_latency_ns=19.0,
        small_max_bytes=23,
        eager_max_bytes=29,
        page_bytes=31,
    )
    rates = network_rates(params_vector(p), 3)
    assert rates == pytest.approx((1 / 2e9, 1 / 3e9, 1 / 2e9, 19e-9, 3 * 19e-9))
    ep = endpoint_costs(params_vector(p), zero_overhead)
    costs = (1 / 5e9, 7e-6, 11e-6, 13e-6, 17e-9)
    expected = (0.0,) * 5 if zero_overhead else costs
    assert tuple(ep)[:5] == pytest.approx(expected)
    assert ep.page == 31.0 and ep.n_regimes == 3 and ep.scale == (0.0 if zero_overhead else 1.0)
    table = ep.table.reshape(3, codes.R_WIDTH)
    assert list(table[:, codes.R_MAX_BYTES]) == [23.0, 29.0, np.inf]
    assert list(table[:, codes.R_PROTOCOL]) == [
        codes.PROTO_SMALL,
        codes.PROTO_EAGER,
        codes.PROTO_RDV,
    ]
