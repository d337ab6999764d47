"""Absence on live pages: when the side waiting may claim the win from a side that left (issue 19).

The side to act is absent once it has had no socket on the page; the grace
(`DOTFIGHT_LIVE_ABSENCE_GRACE_S`, default `DEFAULT_GRACE_S`, handed in by the caller) counts from the
later of the turn passing to it and its last socket closing, so a player who steps away during the
other's long turn is not claimable the moment the turn comes back. After a restart the room counts
every side's last socket as closed when the server came back (nobody can claim for the outage). A page
without a clock has absence too; with a clock, a claim once the time is up writes `time_out` instead.

>>> outcome = claim_outcome(
...     claimant="red", actor="blue", actor_present=False, turn_passed_at=0.0,
...     actor_left_at=30.0, now=95.0, grace_s=60.0, clock=None)
>>> outcome, claim_at(absent_since(False, 0.0, 30.0), 60.0)
('abandon', 90.0)
"""

from __future__ import annotations

from typing import Literal

from dotfight.engine import Side

from .clock import ClockState, due

__all__ = ["DEFAULT_GRACE_S", "ClaimOutcome", "absent_since", "claim_at", "claim_due", "claim_outcome"]

# lichess lets the one who stayed claim victory a short while after the other leaves (tens of seconds).
DEFAULT_GRACE_S = 60.0

ClaimOutcome = Literal["abandon", "time_out"]


def absent_since(present: bool, turn_passed_at: float, left_at: float | None) -> float | None:
    """Returns since when the side to act counts as absent: None while it has a socket on the page, else
    the later of the turn passing to it and its last socket closing (`left_at`; None: it never came).

    >>> absent_since(True, 10.0, 5.0), absent_since(False, 10.0, 5.0), absent_since(False, 10.0, 25.0)
    (None, 10.0, 25.0)
    """
    if present:
        return None
    return turn_passed_at if left_at is None else max(turn_passed_at, left_at)


def claim_at(since: float | None, grace_s: float) -> float | None:
    """Returns when a claim becomes possible (the end of the countdown the one who stayed sees), or None."""
    return None if since is None else since + grace_s


def claim_due(since: float | None, now: float, grace_s: float) -> bool:
    """Tells whether the grace has passed for a side absent `since` then (None: present, never due).

    >>> claim_due(10.0, 69.9, 60.0), claim_due(10.0, 70.0, 60.0), claim_due(None, 1e9, 60.0)
    (False, True, False)
    """
    at = claim_at(since, grace_s)
    return at is not None and now >= at


def claim_outcome(
    *,
    claimant: Side,
    actor: Side | None,
    actor_present: bool,
    turn_passed_at: float,
    actor_left_at: float | None,
    now: float,
    grace_s: float,
    clock: ClockState | None,
) -> ClaimOutcome | None:
    """Returns what the claim of the side waiting writes for the side to act: `"time_out"` when its time
    is up (`clock.due`), `"abandon"` when it has been absent for the grace, or None (the claim is refused:
    the page is over, the claimant is the side to act, the other is present or the grace has not passed).

    >>> facts = dict(actor="blue", turn_passed_at=0.0, actor_left_at=None, now=30.0, grace_s=60.0, clock=None)
    >>> claim_outcome(claimant="red", actor_present=False, **facts) is None
    True
    >>> claim_outcome(claimant="blue", actor_present=False, **{**facts, "now": 100.0}) is None
    True
    """
    if actor is None or claimant == actor:
        return None
    if clock is not None and clock.running == actor and due(clock, now):
        return "time_out"
    if claim_due(absent_since(actor_present, turn_passed_at, actor_left_at), now, grace_s):
        return "abandon"
    return None
