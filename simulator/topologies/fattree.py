"""k-ary n-tree (Petrini and Vanneschi, 1997) with d-mod-k minimal routing.

``k**n`` nodes and ``n`` levels of ``W = k**(n-1)`` switches (level 0 = leaves, each
with ``k`` nodes). Switch ``(l, w)`` (id ``l * W + w``) has an ``(n-1)``-digit base-k
label ``w``; its up-port ``u`` leads to ``(l + 1, w with digit l set to u)`` and its
down-port ``c`` to ``(l - 1, w with digit l - 1 set to c)``. Leaf ``w`` holds nodes
``w * k .. w * k + k - 1``. Links: injection ``0..N-1``, ejection ``N..2N-1``, then up
links ``2N + (l * W + w) * k + u`` (``l < n - 1``), then down links
``2N + (n-1) * W * k + (l * W + w') * k + c`` from ``(l + 1, w')`` down to level ``l``.

Minimal routing between switches ``a`` and ``b``: the walk must visit every level band
``[i, i+1]`` of a differing label digit ``i``; it goes up first or down first,
whichever is shorter (down on ties), setting on every band the digit of ``b``
(``next_link``, switch level). Towards a node ``d`` the up-port at level ``l`` is
instead digit ``l`` of ``d`` (d-mod-k: ``(d // k**l) % k``; ``Topology.next_hop``);
every down link is then used by a single destination and every up link by sources
sharing low destination digits and high source digits, so shift permutations
``d -> (d + s) mod k**n`` are contention-free.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from mpiuq.simulator.codes import VALIANT_TOP_LEVEL
from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.topologies.base import Topology, endpoint_links
from mpiuq.simulator.topologies.registry import TopologyEntry, register_topology

__all__ = ["FATTREE", "build_fattree"]

_BIG = 1 << 30


def build_fattree(k: int, levels: int) -> Topology:
    """k-ary n-tree with ``k**levels`` nodes and ``levels * k**(levels-1)`` switches.

    Parameters
    ----------
    k : int
        Arity (>= 2): nodes per leaf, up- and down-ports per switch.
    levels : int
        Number of switch levels ``n`` (>= 1; 1 is a single switch).

    Raises
    ------
    SettingError
        Naming the parameter, its value and the allowed range.
    """
    if k < 2:
        raise SettingError(f"fattree k={k!r} is invalid: expected a whole number >= 2")
    if levels < 1:
        raise SettingError(f"fattree levels={levels!r} is invalid: expected a whole number >= 1")
    m = levels - 1
    width = k**m
    n_nodes = width * k
    n_sw = levels * width
    node_switch = (np.arange(n_nodes) // k).astype(np.int32)
    n_up = m * width * k
    link_class, link_src, link_dst, inj, ej = endpoint_links(node_switch, 2 * n_up)
    up_base = 2 * n_nodes
    down_base = up_base + n_up
    # up links (l, w, u) -> (l + 1, w with digit l := u); down links are their reverses
    lvl, w, port = (
        a.ravel() for a in np.meshgrid(np.arange(m), np.arange(width), np.arange(k), indexing="ij")
    )
    power = k**lvl
    other = w + (port - (w // power) % k) * power
    link_src[up_base:down_base] = lvl * width + w
    link_dst[up_base:down_base] = (lvl + 1) * width + other
    link_src[down_base:] = (lvl + 1) * width + w
    link_dst[down_base:] = lvl * width + other
    up_links = np.full((n_sw, k), -1, dtype=np.int32)
    up_links[: m * width] = (up_base + np.arange(n_up)).reshape(m * width, k)
    switch_level = np.repeat(np.arange(levels, dtype=np.int32), width)
    notes = (
        "d-mod-k: towards node d the up-port at level l is (d // k**l) % k",
        "switch-to-switch: shorter of up-first / down-first walks, digits of the target",
        "valiant: through a top-level switch",
    )
    return Topology(
        name="fattree",
        params={"k": k, "levels": levels},
        n_nodes=n_nodes,
        n_switches=n_sw,
        link_class=link_class,
        link_src=link_src,
        link_dst=link_dst,
        node_switch=node_switch,
        inj_link=inj,
        ej_link=ej,
        next_link=_next_link(k, levels, up_base, down_base),
        switch_level=switch_level,
        up_links=up_links,
        up_radix=k,
        valiant=(VALIANT_TOP_LEVEL, m * width, width),
        notes=notes,
    )


def _next_link(k: int, levels: int, up_base: int, down_base: int) -> np.ndarray:
    """Switch-level minimal next-link table (see the module docstring)."""
    m = levels - 1
    width = k**m
    n_sw = levels * width
    table = np.full((n_sw, n_sw), -1, dtype=np.int32)
    if m == 0:
        return table
    ids = np.arange(n_sw)
    lb, wb = np.divmod(ids, width)
    digits = (wb[:, None] // k ** np.arange(m)[None, :]) % k  # (n_sw, m)
    idx = np.arange(m)
    for a in range(n_sw):
        la, wa = divmod(a, width)
        diff = digits != digits[a]
        any_diff = diff.any(axis=1)
        min_d = np.where(any_diff, np.where(diff, idx, _BIG).min(axis=1), _BIG)
        max_d = np.where(any_diff, np.where(diff, idx, -1).max(axis=1), -1)
        lo = np.minimum(np.minimum(lb, la), min_d)
        hi = np.maximum(np.maximum(lb, la), max_d + 1)
        down_first_len = (la - lo) + (hi - lo) + (hi - lb)
        up_first_len = (hi - la) + (hi - lo) + (lb - lo)
        go_up = np.where(down_first_len <= up_first_len, la == lo, hi > la)
        row = np.full(n_sw, -1, dtype=np.int64)
        if la < m:
            up = up_base + (la * width + wa) * k + digits[:, la]
            row = np.where(go_up, up, row)
        if la > 0:
            down = down_base + ((la - 1) * width + wa) * k + digits[:, la - 1]
            row = np.where(go_up, row, down)
        row[a] = -1
        table[a] = row
    return table


def _size_for(n_ranks: int, params: dict[str, Any]) -> dict[str, Any]:
    """``levels = 3`` (2 when ``n <= 16``), ``k = max(2, ceil(n ** (1/levels)))``."""
    levels = params.setdefault("levels", 2 if n_ranks <= 16 else 3)
    k = max(2, math.ceil(n_ranks ** (1.0 / levels) - 1e-9))
    while k**levels < n_ranks:  # guard against rounding of the root
        k += 1
    params.setdefault("k", k)
    return params


def _node_count(params: Mapping[str, Any]) -> int:
    k, levels = params["k"], params.get("levels", 3)
    if k < 2 or levels < 1:
        return 0  # the builder names the bad value
    return int(k**levels + levels * k ** (levels - 1))


FATTREE = register_topology(
    TopologyEntry(
        "fattree",
        "k-ary n-tree with d-mod-k routing (default `levels=3`)",
        "fattree:k=4,levels=3",
        lambda p: build_fattree(k=p["k"], levels=p.get("levels", 3)),
        options=("k", "levels"),
        required=("k",),
        size_for=_size_for,
        node_count=_node_count,
    )
)
