"""Parameter validation: every bad value is named with what is allowed."""

from __future__ import annotations

import math

import pytest

from mpiuq.simulator.errors import ParameterError
from mpiuq.simulator.parameters import CONTINUOUS_PARAMETERS, SimParams, parameter_names


def test_defaults_are_table1_maximum_likelihood_values() -> None:
    p = SimParams()
    assert (p.injection_bw_GBps, p.link_bw_GBps, p.memory_bw_GBps) == (13.04, 12.47, 11.20)
    assert (p.post_header_delay_us, p.post_rdma_delay_us) == (0.36, 0.88)
    assert (p.rdma_pin_latency_us, p.rdma_pin_per_page_ns, p.hop_latency_ns) == (5.43, 50.50, 100.0)
    assert (p.small_max_bytes, p.eager_max_bytes, p.page_bytes) == (4096, 65536, 4096)


@pytest.mark.parametrize("name", CONTINUOUS_PARAMETERS)
@pytest.mark.parametrize("value", [0.0, -1.0, math.nan, math.inf])
def test_non_positive_or_non_finite_values_are_rejected(name: str, value: float) -> None:
    with pytest.raises(ParameterError, match=rf"{name}=.* expected a number in \[1e-06, 1e\+06\]"):
        SimParams(**{name: value})  # type: ignore[arg-type]


def test_threshold_order_and_integrality() -> None:
    with pytest.raises(
        ParameterError, match=r"small_max_bytes=70000 .* at most eager_max_bytes=65536"
    ):
        SimParams(small_max_bytes=70000)
    with pytest.raises(ParameterError, match=r"page_bytes=4096.5 .* whole number"):
        SimParams(page_bytes=4096.5)  # type: ignore[arg-type]
    assert SimParams(eager_max_bytes=17408.0).eager_max_bytes == 17408  # type: ignore[arg-type]


def test_unknown_names_are_rejected() -> None:
    with pytest.raises(ParameterError, match=r"linkbw=3 .*one of"):
        SimParams.from_mapping({"linkbw": 3})
    assert SimParams.from_mapping({"link_bw_GBps": 5}).link_bw_GBps == 5.0
    assert len(parameter_names()) == 11


def test_parameters_are_frozen() -> None:
    p = SimParams()
    with pytest.raises(AttributeError):
        p.link_bw_GBps = 3.0  # type: ignore[misc]
