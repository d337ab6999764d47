"""The lag allowance (dotfight/server/people/lag.py): an EWMA of half the round trips, capped."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dotfight.server.people.errors import PeopleError
from dotfight.server.people.lag import (
    ALLOWANCE_CAP_S,
    EWMA_WEIGHT,
    HTTP_ALLOWANCE_S,
    LagEstimate,
    allowance,
    observe,
)


def test_the_estimate_is_an_ewma_of_half_the_round_trips() -> None:
    estimate = observe(LagEstimate(), 0.2)
    assert estimate == LagEstimate(0.1, 1)
    estimate = observe(estimate, 0.6)
    assert estimate.one_way_s == pytest.approx(0.1 + EWMA_WEIGHT * (0.3 - 0.1))
    assert estimate.samples == 2
    steady = LagEstimate()
    for _ in range(60):
        steady = observe(steady, 0.5)
    assert allowance(steady) == pytest.approx(0.25)


def test_no_measured_round_trip_gets_the_http_quota() -> None:
    assert allowance(None) == allowance(LagEstimate()) == HTTP_ALLOWANCE_S


@pytest.mark.parametrize("bad", [-0.001, math.nan, math.inf])
def test_a_bad_round_trip_is_refused(bad: float) -> None:
    with pytest.raises(PeopleError) as refused:
        observe(LagEstimate(), bad)
    assert refused.value.code == "bad_request"


@given(st.lists(st.floats(0, 1e6, allow_nan=False), min_size=1, max_size=50))
def test_the_allowance_is_never_negative_nor_over_the_cap(round_trips: list[float]) -> None:
    estimate = LagEstimate()
    for round_trip in round_trips:
        estimate = observe(estimate, round_trip)
        assert 0 <= allowance(estimate) <= ALLOWANCE_CAP_S
