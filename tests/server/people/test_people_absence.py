"""Absence on live pages (dotfight/server/people/absence.py): the grace, and what a claim writes."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dotfight.server.people.absence import DEFAULT_GRACE_S, absent_since, claim_at, claim_due, claim_outcome
from dotfight.server.people.clock import ClockState, LiveClock
from dotfight.server.people.lag import ALLOWANCE_CAP_S

GRACE = 60.0


def claim(**overrides: Any) -> str | None:
    """Red, waiting, claims against blue, the side to act, absent since the turn passed at 100."""
    facts: dict[str, Any] = {
        "claimant": "red",
        "actor": "blue",
        "actor_present": False,
        "turn_passed_at": 100.0,
        "actor_left_at": None,
        "now": 100.0 + GRACE,
        "grace_s": GRACE,
        "clock": None,
    }
    facts.update(overrides)
    return claim_outcome(**facts)


def test_the_grace_counts_from_the_later_of_the_turn_passing_and_the_last_socket_closing() -> None:
    assert absent_since(False, 100.0, 40.0) == 100.0  # left during the other's turn: from the turn
    assert absent_since(False, 100.0, 130.0) == 130.0  # left during its own turn: from the close
    assert absent_since(True, 100.0, 130.0) is None
    assert claim_at(130.0, GRACE) == 190.0 and claim_at(None, GRACE) is None
    assert not claim_due(130.0, 189.99, GRACE) and claim_due(130.0, 190.0, GRACE)
    assert DEFAULT_GRACE_S == 60.0


def test_a_claim_after_the_grace_writes_abandon_even_without_a_clock() -> None:
    assert claim() == "abandon"
    assert claim(actor_left_at=130.0, now=190.0) == "abandon"


@pytest.mark.parametrize(
    "overrides",
    [
        {"now": 100.0 + GRACE - 0.01},  # the grace has not passed
        {"actor_present": True, "now": 10_000.0},  # the other is on the page
        {"actor_left_at": 150.0, "now": 200.0},  # it left 50 s ago
        {"claimant": "blue"},  # the side to act cannot claim against itself
        {"actor": None},  # the page is over
    ],
)
def test_a_claim_is_refused_while_the_other_is_present_or_the_grace_runs(overrides: dict[str, Any]) -> None:
    assert claim(**overrides) is None


def test_a_claim_once_the_time_is_up_writes_time_out_even_if_the_other_is_present() -> None:
    clock = ClockState(LiveClock(15, 0), 15.0, 15.0, "blue", 100.0)
    assert claim(clock=clock, actor_present=True, now=115.0 + ALLOWANCE_CAP_S) == "time_out"
    assert claim(clock=clock, actor_present=True, now=115.0) is None
    plenty = ClockState(LiveClock(300, 0), 300.0, 300.0, "blue", 100.0)
    assert claim(clock=plenty, now=100.0 + GRACE) == "abandon"  # absent with time left


@given(
    st.floats(0, 1e6),
    st.one_of(st.none(), st.floats(0, 1e6)),
    st.floats(0, 2e6),
    st.floats(1, 600),
    st.booleans(),
)
def test_a_claim_is_never_granted_before_the_grace_and_stays_granted_after(
    turn_passed_at: float, left_at: float | None, now: float, grace: float, present: bool
) -> None:
    outcome = claim(
        actor_present=present, turn_passed_at=turn_passed_at, actor_left_at=left_at, now=now, grace_s=grace
    )
    since = max(turn_passed_at, left_at if left_at is not None else turn_passed_at)
    assert (outcome == "abandon") == (not present and now >= since + grace)
    if outcome == "abandon":
        assert (
            claim(
                actor_present=present,
                turn_passed_at=turn_passed_at,
                actor_left_at=left_at,
                now=now + 1.0,
                grace_s=grace,
            )
            == "abandon"
        )
