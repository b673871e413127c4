"""What a command run at calibrated parameters extrapolates: the warnings of ``--params``.

``mpiuq simulate``, ``replay`` and ``whatif`` with ``--params results/X`` compare what
they simulate with what the campaign calibrated (:mod:`mpiuq.calibration.reporting.prediction`):
benchmark kinds, message sizes, protocol regimes. Warnings go to stderr and into the
command's JSON (``warnings``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from mpiuq.calibration.reporting.prediction import CalibrationScope
    from mpiuq.simulator.lowering.lower import Lowered
    from mpiuq.simulator.parameters import SimParams


def calibration_scope(path: Path) -> CalibrationScope:
    """What the campaign of ``--params`` calibrated (its ``summary.json``)."""
    from mpiuq.calibration.reporting.artefacts import read_summary
    from mpiuq.calibration.reporting.prediction import scope_from_summary

    return scope_from_summary(*read_summary(path))


def warn(warnings: list[str]) -> None:
    """Print every warning on stderr."""
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)


def replay_warnings(path: Path, lowered: Lowered, params: SimParams) -> list[str]:
    """Warnings of a replay of the lowered trace at the calibration of ``path``: messages
    (point-to-point and those of the collectives' schedules) outside the calibrated size
    range or in regimes without calibration data."""
    from mpiuq.calibration.reporting.prediction import message_warnings
    from mpiuq.simulator.codes import COL_KIND, OP_ISEND

    program = lowered.program
    sends = np.asarray(program.ops[:, COL_KIND] == OP_ISEND)
    sizes, counts = np.unique(np.asarray(program.nbytes)[sends], return_counts=True)
    regimes = [params.protocol_of(int(s)) for s in sizes]
    return message_warnings(calibration_scope(path), sizes.tolist(), counts.tolist(), regimes)
