"""The lag allowance: how much of a move's elapsed time is the network's, not the player's (issue 19).

Each seat's socket measures round trips (a ping and its pong); the one-way lag is estimated as an
exponentially weighted mean of half of each round trip, as lichess's lag compensation estimates a
player's lag. The allowance a move gets is that estimate, capped at `ALLOWANCE_CAP_S`: a phone on a slow
network keeps its clock, and a client faking a slow network gains at most the cap per action. An action
over HTTP has no measured round trip and gets the small fixed `HTTP_ALLOWANCE_S`.

>>> estimate = observe(observe(LagEstimate(), 0.2), 0.4)
>>> round(estimate.one_way_s, 3), round(allowance(estimate), 3)
(0.12, 0.12)
>>> allowance(observe(LagEstimate(), 30.0)), allowance(LagEstimate()), allowance(None)
(1.0, 0.1, 0.1)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .errors import PeopleError

__all__ = [
    "ALLOWANCE_CAP_S",
    "EWMA_WEIGHT",
    "HTTP_ALLOWANCE_S",
    "LagEstimate",
    "allowance",
    "capped",
    "observe",
]

# The most one action's arrival may be forgiven (lichess forgives up to its quota, a few seconds, per
# move; a turn of Dotfight is several actions, so the cap per action is lower).
ALLOWANCE_CAP_S = 1.0
# An action over HTTP, or on a socket that has not measured a round trip yet.
HTTP_ALLOWANCE_S = 0.1
# The weight of each new half round trip in the mean: about the last five samples count.
EWMA_WEIGHT = 0.2
# A single round trip counts for at most this much (a phone waking from sleep answers its ping late).
_SAMPLE_CAP_S = 5.0


@dataclass(frozen=True, slots=True)
class LagEstimate:
    """A seat's estimated one-way lag in seconds (None before its first round trip) and the samples seen.

    >>> LagEstimate().one_way_s is None
    True
    """

    one_way_s: float | None = None
    samples: int = 0


def observe(estimate: LagEstimate, round_trip_s: float) -> LagEstimate:
    """Returns the estimate with one more measured round trip (seconds, finite, not negative).

    >>> observe(LagEstimate(), 0.1)
    LagEstimate(one_way_s=0.05, samples=1)
    >>> observe(LagEstimate(), -1.0)
    Traceback (most recent call last):
    ...
    dotfight.server.people.errors.PeopleError: a round trip must be a finite number of seconds >= 0
    """
    if not math.isfinite(round_trip_s) or round_trip_s < 0:
        raise PeopleError(
            "bad_request", "bad_round_trip", "a round trip must be a finite number of seconds >= 0"
        )
    sample = min(round_trip_s, _SAMPLE_CAP_S) / 2
    if estimate.one_way_s is None:
        return LagEstimate(sample, 1)
    mean = estimate.one_way_s + EWMA_WEIGHT * (sample - estimate.one_way_s)
    return LagEstimate(mean, estimate.samples + 1)


def allowance(estimate: LagEstimate | None) -> float:
    """Returns the allowance of an action from a seat with this estimate (None: over HTTP), capped."""
    if estimate is None or estimate.one_way_s is None:
        return HTTP_ALLOWANCE_S
    return capped(estimate.one_way_s)


def capped(allowance_s: float) -> float:
    """Returns an allowance held to 0 … `ALLOWANCE_CAP_S` (NaN counts as none).

    >>> capped(3.0), capped(-1.0), capped(float("nan"))
    (1.0, 0.0, 0.0)
    """
    if not allowance_s > 0:
        return 0.0
    return min(allowance_s, ALLOWANCE_CAP_S)
