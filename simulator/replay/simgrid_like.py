"""``--like simgrid``: SimGrid 3.32's SMPI semantics in one switch, field by field.

SimGrid users compare against ``smpirun``; these are the settings that make an mpiuq
replay mean what ``smpirun`` (and ``smpirun -replay``) compute, each with its origin
in SimGrid 3.32's sources (the table :data:`SIMGRID_FIELDS` is what the docs list):

* network: the flow model with SimGrid's ``network/model:SMPI`` (``smpirun``'s default):
  max-min sharing with latency penalties and ``network/weight-S`` 8775 B, TCP window
  4 MiB, cross-traffic 0.05, SMPI's size-dependent latency and bandwidth factors, a
  16-byte envelope on every message, no protocol control messages;
* endpoints: no MPI-stack costs (``smpi/os``, ``smpi/or``, ``smpi/ois`` are 0);
* protocols: sends below ``smpi/send-is-detached-thresh`` (65536 B) are detached (the
  send completes when posted; the payload moves once the receive matches), larger
  ones synchronous (one transfer once matched; the send completes when it ends);
* reductions: free (SMPI charges nothing for the reduction operator; a TI trace's
  ``comp_size``, 0 when SMPI records it, would be charged as ``compute``);
* collectives: SimGrid's ``default`` selector, with Open MPI's all-to-all decision
  (``--collectives simgrid``); explicit ``--algorithm`` choices still win;
* wildcards: ``-333`` (any source) and ``-444`` (any tag) of SMPI's TI traces are read
  as MPI's wildcards by the TI reader, with or without this switch.

With ``--platform`` the network's bandwidths and latencies, and the hosts' speed (the
flop rate of ``compute``), come from the platform file.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from mpiuq.simulator.codes import PLATFORM_MODELS
from mpiuq.simulator.collectives import algorithm_set
from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.parameters import SimParams
from mpiuq.simulator.regimes import Regime

if TYPE_CHECKING:  # the replay engine is imported when a replay runs
    from mpiuq.simulator.replay.run import ReplaySetup

#: What ``--like`` accepts.
LIKE_TARGETS: tuple[str, ...] = ("simgrid",)
#: SMPI's ``smpi/send-is-detached-thresh``: sends of fewer bytes are detached.
DETACHED_THRESHOLD_BYTES = 65536
#: The protocol regimes of SMPI's sends.
SIMGRID_REGIMES: tuple[Regime, ...] = (
    Regime("detached", DETACHED_THRESHOLD_BYTES - 1),
    Regime("rendezvous", math.inf, name="synchronous"),
)


@dataclass(frozen=True, slots=True)
class LikeField:
    """One setting of ``--like simgrid``: what mpiuq sets, and SimGrid's source of it."""

    name: str
    value: str
    simgrid: str


SIMGRID_FIELDS: tuple[LikeField, ...] = (
    LikeField("model", "flow", "smpirun: --cfg=network/model:SMPI (src/smpi/smpirun.in)"),
    LikeField(
        "sharing",
        "smpi: max-min, penalty = latency + 8775 B / bandwidth per link",
        "network/weight-S 8775 (src/surf/network_smpi.cpp), lmm max-min (src/kernel/lmm/maxmin.cpp)",
    ),
    LikeField(
        "TCP window", "4194304 B: rate <= 4194304 / (2 latency)", "network/TCP-gamma (NetworkModel.cpp)"
    ),
    LikeField(
        "cross-traffic", "0.05 of each flow on its reverse route", "network/crosstraffic:yes (network_cm02.cpp)"
    ),
    LikeField(
        "latency and bandwidth factors",
        "SMPI's tables by message size (2.01 .. 11.6; 0.34 .. 1.09)",
        "smpi/lat-factor, smpi/bw-factor defaults (src/simgrid/sg_config.cpp)",
    ),
    LikeField("envelope", "16 B added to every message", "payload_size_ = size_ + 16 (smpi_request.cpp)"),
    LikeField(
        "control messages", "none (headers, get requests, acknowledgements take no time)",
        "SimGrid moves one transfer per message (CommImpl)",
    ),
    LikeField("endpoint costs", "none", "smpi/os, smpi/or, smpi/ois default 0:0:0:0:0 (smpi_config.cpp)"),
    LikeField(
        "detached sends",
        f"below {DETACHED_THRESHOLD_BYTES} B: complete when posted, payload moves once matched",
        "smpi/send-is-detached-thresh 65536, smpi/async-small-thresh 0 (smpi_request.cpp)",
    ),
    LikeField(
        "synchronous sends",
        f"{DETACHED_THRESHOLD_BYTES} B and more: one transfer once matched; send ends with it",
        "Request::start / wait (smpi_request.cpp)",
    ),
    LikeField("reductions", "free", "MPI_OP_NULL in the replay; no cost of the operator (smpi_replay.cpp)"),
    LikeField(
        "collectives",
        "SimGrid's default selector; all-to-all by Open MPI's decision",
        "smpi/coll-selector:default (smpi_default_selector.cpp, smpi_openmpi_selector.cpp)",
    ),
    LikeField(
        "wildcards", "-333 any source, -444 any tag (TI reader)", "MPI_ANY_SOURCE / MPI_ANY_TAG in SMPI's mpi.h"
    ),
    LikeField("host speed", "the platform's (first power state)", "<cluster speed=...> (sg_platf.cpp)"),
)  # fmt: skip


def check_like(target: str | None) -> None:
    """Raise :class:`SettingError` unless ``target`` is ``None`` or in :data:`LIKE_TARGETS`."""
    if target is not None and target not in LIKE_TARGETS:
        raise SettingError(f"--like {target!r} is unknown: expected one of {list(LIKE_TARGETS)}")


def like_params(target: str | None, params: SimParams) -> SimParams:
    """``params`` with the protocol regimes of ``target`` (unchanged for ``None``)."""
    check_like(target)
    if target is None:
        return params
    return replace(params, regimes=SIMGRID_REGIMES)


def like_setup(
    target: str | None, setup: ReplaySetup, explicit_algorithms: tuple[tuple[str, str], ...] = ()
) -> ReplaySetup:
    """``setup`` with the network, reductions and collectives of ``target``.

    ``explicit_algorithms`` (``--algorithm`` choices) win over the target's selector.

    Raises
    ------
    SettingError
        For an unknown target, or a model that cannot follow SimGrid's semantics.
    """
    check_like(target)
    if target is None:
        return setup
    other = [m for m in setup.models if m not in PLATFORM_MODELS]
    if other:
        raise SettingError(
            f"--like simgrid replays on the flow model (and compute-only): models {other} "
            "do not follow SimGrid's semantics"
        )
    algorithms = algorithm_set("simgrid") | dict(explicit_algorithms)
    return replace(
        setup,
        sharing="smpi",
        free_endpoints=True,
        reduce_rate_Bps=math.inf,
        algorithms=tuple(sorted(algorithms.items())),
    )


#: Parameters a platform file sets (:func:`platform_params`).
PLATFORM_PARAMS: tuple[str, ...] = ("injection_bw_GBps", "link_bw_GBps", "hop_latency_ns")


def platform_params(params: SimParams, reference: tuple[float, float] | None) -> SimParams:
    """``params`` with a platform zone's reference network values: both bandwidths
    ``reference[0]`` GB/s and the hop latency ``reference[1]`` ns (unchanged for None)."""
    if reference is None:
        return params
    bw, lat = reference
    return params.with_values(**dict(zip(PLATFORM_PARAMS, (bw, bw, lat), strict=True)))
