"""The readers' checks of ``tests/integration`` on the larger shared traces (seconds to
minutes each): the TI traces against their READMEs' counts, a raw SMPI recording against
its replayable variant, the generated LULESH runs in DUMPI and in all three formats."""

from __future__ import annotations

import pytest
from shared_data import needs_traces
from test_trace_crossformat import test_lulesh_three_formats_agree as _three_formats_agree
from test_trace_dumpi import test_generated_lulesh_counts_and_fifo_completion as _dumpi_lulesh
from test_trace_ti import _BIG
from test_trace_ti import test_raw_recording_equals_replayable_variant as _raw_vs_replayable
from test_trace_ti import test_real_ti_trace_matches_readme_counts as _readme_counts

pytestmark = needs_traces


@pytest.mark.parametrize("name", sorted(_BIG))
def test_real_ti_trace_matches_readme_counts(name: str) -> None:
    _readme_counts(name)


@pytest.mark.parametrize("name", ["ti_lulesh_64r"])
def test_raw_recording_equals_replayable_variant(name: str) -> None:
    _raw_vs_replayable(name)


@pytest.mark.parametrize("n", [27])
def test_generated_lulesh_counts_and_fifo_completion(n: int) -> None:
    _dumpi_lulesh(n)


@pytest.mark.parametrize("n", [27, 64])
def test_lulesh_three_formats_agree(n: int) -> None:
    _three_formats_agree(n)
