"""Rematch: an offer's life on a finished page, and what the rematch is (issue 19).

Either seat of a finished page offers; the other seat accepting makes the rematch (watchers never
offer). `DELETE` withdraws one's own offer or declines the other's. An offer lasts `OFFER_LIFETIME_S` of
its page's mode; a page has at most one rematch. Against Dawood-bot and on one phone the one seat's
offer starts it at once. `rematch_command` says what to create: the same preset, rules, mode, clock and
bot strength, the colours swapped, and a fresh seed (never the chosen seed of a one-phone page).

>>> state, make = offer(RematchState(), seat="red", mode="link", finished=True, now=0.0)
>>> state.offered_by, make
('red', False)
>>> state, make = offer(state, seat="blue", mode="link", finished=True, now=60.0)
>>> make, standing(made(state, "p2"), "link", now=61.0)
(True, {'offered_by': 'red', 'page': 'p2'})
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dotfight.engine import Side, other_side

from .clock import ClockSettings
from .errors import PeopleError

__all__ = [
    "OFFER_LIFETIME_S",
    "OldPage",
    "RematchCommand",
    "RematchError",
    "RematchState",
    "live_offer",
    "made",
    "offer",
    "rematch_command",
    "standing",
    "starts_at_once",
    "withdraw",
]

# A link page's players come back at their own pace (a week, as a correspondence game's days); a live
# page's players are either still there or gone.
OFFER_LIFETIME_S: dict[str, float] = {"link": 7 * 24 * 3600.0, "live": 10 * 60.0}
_SOLO_MODES = ("bot", "local")


class RematchError(PeopleError):
    """A rematch request refused: `bad_token` (no seat: a watcher) or `illegal_action` (page in play,
    rematch made)."""


@dataclass(frozen=True, slots=True)
class RematchState:
    """Where a page's rematch stands: the standing offer (`offered_by`, `offered_at`) and once accepted the
    new page's id (`page`).

    >>> RematchState.from_json(RematchState("blue", 5.0).to_json())
    RematchState(offered_by='blue', offered_at=5.0, page=None)
    """

    offered_by: Side | None = None
    offered_at: float | None = None
    page: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Returns the state as the store keeps it (it survives a restart)."""
        return {"offered_by": self.offered_by, "offered_at": self.offered_at, "page": self.page}

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> RematchState:
        """Reads `to_json()` back exactly."""
        at = raw["offered_at"]
        return cls(raw["offered_by"], None if at is None else float(at), raw["page"])


def starts_at_once(mode: str) -> bool:
    """Tells whether one seat's offer makes the rematch at once (against Dawood-bot, on one phone)."""
    return mode in _SOLO_MODES


def live_offer(state: RematchState, mode: str, now: float) -> Side | None:
    """Returns the seat whose offer still stands (not expired), or None.

    >>> offered = RematchState("blue", 0.0)
    >>> live_offer(offered, "live", now=599.0), live_offer(offered, "live", now=600.0)
    ('blue', None)
    """
    if state.offered_by is None or state.offered_at is None:
        return None
    lifetime = OFFER_LIFETIME_S.get(mode, OFFER_LIFETIME_S["link"])
    return state.offered_by if now < state.offered_at + lifetime else None


def offer(
    state: RematchState, *, seat: Side | None, mode: str, finished: bool, now: float
) -> tuple[RematchState, bool]:
    """Returns the state after `seat` offers (or accepts), and whether the rematch is to be made now.

    A repeated offer changes nothing; once the rematch exists the answer is the same state (it names the
    page). Raises `RematchError`: `bad_token` without a seat, `illegal_action` on a page in play.

    >>> offer(RematchState(), seat=None, mode="link", finished=True, now=0.0)
    Traceback (most recent call last):
    ...
    dotfight.server.people.rematch.RematchError: only a seat of the page may offer a rematch
    >>> offer(RematchState(), seat="blue", mode="bot", finished=True, now=0.0)
    (RematchState(offered_by='blue', offered_at=0.0, page=None), True)
    """
    _check_seat(seat)
    assert seat is not None
    if not finished:
        raise RematchError("illegal_action", "page_in_play", "a page in play has no rematch")
    if state.page is not None:
        return state, False
    standing_offer = live_offer(state, mode, now)
    if starts_at_once(mode):
        return RematchState(seat, now), True
    if standing_offer == other_side(seat):
        return state, True
    if standing_offer == seat:
        return state, False
    return RematchState(seat, now), False


def withdraw(state: RematchState, *, seat: Side | None) -> RematchState:
    """Returns the state after `seat` withdraws its offer or declines the other's (nothing standing: no
    change). Raises `RematchError`: `bad_token` without a seat, `illegal_action` once the rematch exists.

    >>> withdraw(RematchState("red", 0.0), seat="blue")
    RematchState(offered_by=None, offered_at=None, page=None)
    """
    _check_seat(seat)
    if state.page is not None:
        raise RematchError("illegal_action", "rematch_made", "the rematch has been made")
    return RematchState()


def made(state: RematchState, page_id: str) -> RematchState:
    """Returns the state once the rematch page exists."""
    return RematchState(state.offered_by, state.offered_at, page_id)


def standing(state: RematchState, mode: str, now: float) -> dict[str, Any]:
    """Returns the answer of `/rematch` and the sockets' `rematch` message: `{offered_by, page}`."""
    offered_by = state.offered_by if state.page is not None else live_offer(state, mode, now)
    return {"offered_by": offered_by, "page": state.page}


def _check_seat(seat: Side | None) -> None:
    """Refuses a request without a seat: watchers are never offered a rematch."""
    if seat is None:
        raise RematchError("bad_token", "not_a_seat", "only a seat of the page may offer a rematch")


@dataclass(frozen=True, slots=True)
class OldPage:
    """The facts of the finished page a rematch copies: its preset, rules (as stored), mode, clock, the
    bot's seat, and the seed chosen at creation, if any (never copied)."""

    preset: str
    rules: dict[str, Any]
    mode: str
    clock: ClockSettings | None = None
    bot_side: Side | None = None
    bot_strength: str | None = None
    chosen_seed: int | None = None


@dataclass(frozen=True, slots=True)
class RematchCommand:
    """What to create: the new page's preset, rules, mode, clock, bot seat and strength; `seed` is always
    None (the server draws a fresh one); `new_side` maps each old seat to its seat on the new page
    (swapped); `at_once` says the page starts without the other seat's acceptance."""

    preset: str
    rules: dict[str, Any]
    mode: str
    clock: ClockSettings | None
    bot_side: Side | None
    bot_strength: str | None
    new_side: dict[Side, Side]
    at_once: bool
    seed: None = None


def rematch_command(old: OldPage) -> RematchCommand:
    """Returns what the rematch of `old` creates: the same page with the colours swapped, a fresh seed.

    >>> command = rematch_command(OldPage("quick", {"preset": "quick"}, "bot", None, "red", "hard", 42))
    >>> command.bot_side, command.bot_strength, command.new_side, command.at_once, command.seed
    ('blue', 'hard', {'blue': 'red', 'red': 'blue'}, True, None)
    """
    return RematchCommand(
        preset=old.preset,
        rules=dict(old.rules),
        mode=old.mode,
        clock=old.clock,
        bot_side=None if old.bot_side is None else other_side(old.bot_side),
        bot_strength=old.bot_strength,
        new_side={"blue": "red", "red": "blue"},
        at_once=starts_at_once(old.mode),
    )
