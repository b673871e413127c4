"""Sensitivity grouping (eq. 9): connected components of the outputs-parameters graph."""

from __future__ import annotations

import numpy as np
import pytest

from mpiuq.calibration.errors import SamplerError
from mpiuq.calibration.sampling.grouping import Group, group_by_sobol, joint_grouping


def test_paper_like_structure_gives_three_groups_and_an_unconstrained_parameter() -> None:
    # Hand-made matrix shaped like Fig. 5: mailbox outputs <- p3, eager <- p1,p4,
    # rendezvous <- p0,p2,p5; p6 below the threshold everywhere.
    s = np.zeros((6, 7))
    s[0:2, 3] = 0.9
    s[2, 1] = 0.5
    s[3, 4] = 0.7  # eager outputs linked through p1 on output 3
    s[3, 1] = 0.3
    s[4:6, 0] = 0.4
    s[4, 2] = 0.3
    s[5, 5] = 0.6
    s[:, 6] = 0.01
    g = group_by_sobol(s, 0.05)
    assert g.groups == (Group((3,), (0, 1)), Group((1, 4), (2, 3)), Group((0, 2, 5), (4, 5)))
    assert g.unconstrained == (6,)
    assert g.unexplained == ()


def test_a_shared_parameter_merges_groups_and_threshold_matters() -> None:
    s = np.array([[0.8, 0.0, 0.2], [0.0, 0.8, 0.2]])
    assert len(group_by_sobol(s, 0.1).groups) == 1  # p2 links both outputs
    split = group_by_sobol(s, 0.3)
    assert split.groups == (Group((0,), (0,)), Group((1,), (1,)))
    assert split.unconstrained == (2,)


def test_output_without_influential_parameter_is_unexplained() -> None:
    g = group_by_sobol(np.array([[0.9, 0.0], [0.01, 0.02]]), 0.05)
    assert g.unexplained == (1,) and g.unconstrained == (1,)


def test_joint_grouping_and_bad_inputs() -> None:
    assert joint_grouping(3, 2).groups == (Group((0, 1), (0, 1, 2)),)
    with pytest.raises(SamplerError, match=r"sobol_threshold=1.5"):
        group_by_sobol(np.zeros((2, 2)), 1.5)
    with pytest.raises(SamplerError, match=r"shape \(3,\)"):
        group_by_sobol(np.zeros(3), 0.1)
