"""Live Fischer clocks and link per-move deadlines: a page's time as one frozen value (issue 19).

Time is the server's, never the engine's: every time here is seconds since the Unix epoch, handed in by
the caller. `start_clock` makes a page's clock at creation, `after_commit` is the transition applied on
every committed action (asking the engine's state who is to act, the phase and the turn's number),
`in_time` and `due` say whether a move is still accepted and when a `time_out` is to be written, `view`
is the snapshot's `clock` (PROTOCOL.md, "Time, absence, rematch and phrases"), and `credit_downtime`
gives back the time the server could not be played on.

A live page's clocks start at the first turn of play. Before it, the side to act has `SETUP_MOVE_S` for
each setup move — a stretch of actions by the same side to act (drawing a base; a quick setup and the
positioning after it; positioning and `ready`) — and `blue_s`/`red_s` stay `initial_s`. On a link page
the side to act has `per_move_s` from the commit that made it the side to act; the deadline restarts only
when the side to act changes.

>>> from dotfight.engine import RuleSet, apply, new_page
>>> page = new_page(RuleSet.preset("quick"), seed=7)
>>> clock = start_clock(parse_clock("live", {"initial_s": 60, "increment_s": 2}), page, now=1000.0)
>>> clock.running, clock.deadline
('blue', 1090.0)
>>> for side, kind in [("blue", "quick_setup"), ("blue", "ready"), ("red", "ready")]:
...     after, _ = apply(page, side, {"type": kind})
...     clock, page = after_commit(page, after, clock, arrived_at=1010.0, allowance=0.0), after
>>> clock.running, clock.blue_s, clock.deadline
('blue', 60.0, 1070.0)
>>> view(clock, now=1025.5)["blue_s"]
44.5
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from dotfight.engine import Side, State
from dotfight.engine.errors import quoted

from .errors import PeopleError
from .lag import ALLOWANCE_CAP_S, capped

__all__ = [
    "INCREMENT_RANGE",
    "INITIAL_RANGE",
    "PER_MOVE_RANGE",
    "REMINDER_LEFT",
    "SETUP_MOVE_S",
    "ClockError",
    "ClockSettings",
    "ClockState",
    "LateMove",
    "LinkClock",
    "LiveClock",
    "after_commit",
    "credit_downtime",
    "due",
    "in_time",
    "iso_utc",
    "parse_clock",
    "reminder_at",
    "settings_from_json",
    "start_clock",
    "time_out_at",
    "view",
]

# PROTOCOL.md's ranges, in whole seconds, both ends included.
INITIAL_RANGE = (15, 10800)
INCREMENT_RANGE = (0, 180)
PER_MOVE_RANGE = (3600, 1209600)
# Each setup move of a live page (lichess gives a new game's first move 30 s or so; a Dotfight setup move
# may be a whole arrangement of soldiers, a few drags).
SETUP_MOVE_S = 90.0
# A link page's side to act is reminded when this share of its time per move is left.
REMINDER_LEFT = 0.2


class ClockError(PeopleError):
    """A `clock` a new page may not have (`bad_request`); `field` names the bad input.

    >>> parse_clock("live", {"initial_s": 5})
    Traceback (most recent call last):
    ...
    dotfight.server.people.clock.ClockError: clock.initial_s must be a whole number from 15 to 10800, not 5
    """

    def __init__(self, field: str, reason: str, message: str) -> None:
        super().__init__("bad_request", reason, message)
        self.field = field


class LateMove(PeopleError):
    """A move that reached the server after its deadline plus its allowance: it is not applied."""

    def __init__(self, message: str) -> None:
        super().__init__("illegal_action", "out_of_time", message)


@dataclass(frozen=True, slots=True)
class LiveClock:
    """A live page's Fischer clock: each side's time, and what each finished turn of play adds."""

    initial_s: int
    increment_s: int = 0

    def to_json(self) -> dict[str, int]:
        """Returns the clock as created: `{initial_s, increment_s}`."""
        return {"initial_s": self.initial_s, "increment_s": self.increment_s}


@dataclass(frozen=True, slots=True)
class LinkClock:
    """A link page's time per move: how long the side to act has for each of its turns and setup moves."""

    per_move_s: int

    def to_json(self) -> dict[str, int]:
        """Returns the clock as created: `{per_move_s}`."""
        return {"per_move_s": self.per_move_s}


ClockSettings = LiveClock | LinkClock


def parse_clock(mode: str, raw: object) -> ClockSettings | None:
    """Reads the creation body's `clock` for a page of this mode; None (or absent) is no clock.

    >>> parse_clock("link", {"per_move_s": 86400})
    LinkClock(per_move_s=86400)
    >>> parse_clock("bot", {"initial_s": 60}) is None
    Traceback (most recent call last):
    ...
    dotfight.server.people.clock.ClockError: clock: only live and link pages have a clock, not bot pages
    """
    if raw is None:
        return None
    if mode not in ("live", "link"):
        raise ClockError(
            "clock", "clock_not_allowed", f"clock: only live and link pages have a clock, not {mode} pages"
        )
    if not isinstance(raw, dict):
        raise ClockError("clock", "bad_clock", "clock must be an object or null")
    if mode == "live":
        _known(raw, ("initial_s", "increment_s"))
        return LiveClock(
            _whole(raw, "initial_s", INITIAL_RANGE, required=True),
            _whole(raw, "increment_s", INCREMENT_RANGE, required=False),
        )
    _known(raw, ("per_move_s",))
    return LinkClock(_whole(raw, "per_move_s", PER_MOVE_RANGE, required=True))


def settings_from_json(raw: dict[str, Any]) -> ClockSettings:
    """Reads stored settings back (the shape tells the kind: `per_move_s` is a link page's).

    >>> settings_from_json(LiveClock(300, 3).to_json())
    LiveClock(initial_s=300, increment_s=3)
    """
    settings = parse_clock("link" if "per_move_s" in raw else "live", raw)
    if settings is None:
        raise ClockError("clock", "bad_clock", "stored clock settings are missing")
    return settings


def _known(raw: dict[Any, Any], names: tuple[str, ...]) -> None:
    """Refuses a field the clock does not have (a typo must not silently mean "no limit")."""
    for key in raw:
        if key not in names:
            raise ClockError(f"clock.{key}", "unknown_field", f"clock.{key} is not a field of this clock")


def _whole(raw: dict[str, Any], name: str, bounds: tuple[int, int], *, required: bool) -> int:
    """Returns the whole number `raw[name]` within `bounds` (0 when absent and not required)."""
    low, high = bounds
    if name not in raw:
        if required:
            raise ClockError(f"clock.{name}", "missing_field", f"clock.{name} is required")
        return 0
    value = raw[name]
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ClockError(
            f"clock.{name}",
            "out_of_range",
            f"clock.{name} must be a whole number from {low} to {high}, not {quoted(value)}",
        )
    return value


@dataclass(frozen=True, slots=True)
class ClockState:
    """A page's time: each side's time left when its time last started (`blue_s`, `red_s`), the side
    whose time runs (`running`, None when nobody's does), since when (`since`: the commit that made it
    their move, or their last action's), and whether a live page is still in setup (`setup`).

    >>> state = ClockState(LinkClock(3600), 3600.0, 3600.0, "red", 50.0, setup=False)
    >>> ClockState.from_json(state.to_json()) == state, state.deadline
    (True, 3650.0)
    """

    settings: ClockSettings
    blue_s: float
    red_s: float
    running: Side | None
    since: float | None
    setup: bool = False

    def left(self, side: Side) -> float:
        """Returns the side's time left when its time last started (not counted down to any now)."""
        return self.blue_s if side == "blue" else self.red_s

    @property
    def budget(self) -> float | None:
        """Returns what the running side had at `since`: its setup time, its clock, or its time per move."""
        if self.running is None:
            return None
        if isinstance(self.settings, LinkClock):
            return float(self.settings.per_move_s)
        return SETUP_MOVE_S if self.setup else self.left(self.running)

    @property
    def deadline(self) -> float | None:
        """Returns when the running side's time ends (seconds since the epoch), or None."""
        budget = self.budget
        if budget is None or self.since is None:
            return None
        return self.since + budget

    def to_json(self) -> dict[str, Any]:
        """Returns the state as the store keeps it (an opaque dict, with the `deadline` it indexes)."""
        return {
            "settings": self.settings.to_json(),
            "blue_s": self.blue_s,
            "red_s": self.red_s,
            "running": self.running,
            "since": self.since,
            "setup": self.setup,
            "deadline": self.deadline,
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> ClockState:
        """Reads `to_json()` back exactly (the stored `deadline` is worked out again, not trusted); raises
        `ClockError` for a dict it did not write.

        >>> ClockState.from_json({"settings": {"per_move_s": 3600}})
        Traceback (most recent call last):
        ...
        dotfight.server.people.clock.ClockError: clock: not a stored clock ('since' is missing)
        """
        try:
            settings, since, running = settings_from_json(raw["settings"]), raw["since"], raw["running"]
            if running not in ("blue", "red", None):
                raise ClockError(
                    "clock.running",
                    "bad_clock",
                    f"clock.running must be blue, red or null: {quoted(running)}",
                )
            return cls(
                settings=settings,
                blue_s=_seconds(raw["blue_s"]),
                red_s=_seconds(raw["red_s"]),
                running=running,
                since=None if since is None else _seconds(since),
                setup=raw["setup"] is True,
            )
        except KeyError as missing:
            raise ClockError(
                "clock", "bad_clock", f"clock: not a stored clock ({missing} is missing)"
            ) from None


def _seconds(value: object) -> float:
    """Returns a stored number of seconds as a float; refuses anything else (a bool, a string, NaN)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ClockError("clock", "bad_clock", f"clock: not a number of seconds: {quoted(value)}")
    return float(value)


def start_clock(settings: ClockSettings, state: State, now: float) -> ClockState:
    """Returns a new page's clock: the side to act's time (its setup time on a live page) runs from now."""
    full = float(settings.initial_s if isinstance(settings, LiveClock) else settings.per_move_s)
    running = state.actor
    return ClockState(
        settings,
        full,
        full,
        running,
        None if running is None else now,
        setup=isinstance(settings, LiveClock) and state.phase != "play",
    )


def in_time(clock: ClockState, arrived_at: float, allowance: float) -> bool:
    """Tells whether a move that reached the server at `arrived_at` is applied: before the deadline plus
    its allowance (capped at `lag.ALLOWANCE_CAP_S`).

    >>> clock = ClockState(LiveClock(60), 60.0, 60.0, "blue", 0.0)
    >>> in_time(clock, 60.4, 0.5), in_time(clock, 60.4, 0.3), in_time(clock, 61.5, 9.0)
    (True, False, False)
    """
    deadline = clock.deadline
    return deadline is None or arrived_at < deadline + capped(allowance)


def due(clock: ClockState, now: float) -> bool:
    """Tells whether the running side's `time_out` is to be written: only after the deadline plus the cap,
    so no move that could still be in time is beaten by it.

    >>> clock = ClockState(LiveClock(60), 60.0, 60.0, "blue", 0.0)
    >>> due(clock, 60.9), due(clock, 61.0)
    (False, True)
    """
    at = time_out_at(clock)
    return at is not None and now >= at


def time_out_at(clock: ClockState) -> float | None:
    """Returns when the running side's `time_out` becomes due (the alarm's time for the page), or None.

    >>> time_out_at(ClockState(LinkClock(3600), 3600.0, 3600.0, "red", 0.0))
    3601.0
    """
    deadline = clock.deadline
    return None if deadline is None else deadline + ALLOWANCE_CAP_S


def reminder_at(clock: ClockState) -> float | None:
    """Returns when a link page's side to act is reminded (by push, once per move, not while it has the
    page open): when a fifth of its time is left, as lichess's correspondence alarm. None on a live page
    or when nobody's time runs.

    >>> reminder_at(ClockState(LinkClock(86400), 86400.0, 86400.0, "blue", 0.0))
    69120.0
    """
    if not isinstance(clock.settings, LinkClock) or clock.since is None or clock.running is None:
        return None
    return clock.since + clock.settings.per_move_s * (1 - REMINDER_LEFT)


def after_commit(
    state_before: State, state_after: State, clock: ClockState, arrived_at: float, allowance: float
) -> ClockState:
    """Returns the clock after a committed action that reached the server at `arrived_at`.

    On a live page in play the running side is charged from `since` to `arrived_at`, less the sender's
    `allowance` (capped), gains the increment when its turn of play passed (not per flick), and each of
    its actions restarts `since` (each is a round trip the player waits for). The side to act next runs
    from `arrived_at`. In setup and on link pages the running side's time restarts only when the side to
    act changes. Raises `LateMove` for an action that was not `in_time` and did not end the page (the
    server asks `in_time` first and writes `time_out` instead); an ended page's clock stops.
    """
    settings = clock.settings
    over = state_after.phase == "over" or state_after.actor is None
    if not over and not in_time(clock, arrived_at, allowance):
        raise LateMove(f"the move reached the server after {clock.running}'s deadline")
    blue_s, red_s = clock.blue_s, clock.red_s
    running = clock.running
    if (
        isinstance(settings, LiveClock)
        and not clock.setup
        and running is not None
        and clock.since is not None
    ):
        charged = max(0.0, arrived_at - clock.since - capped(allowance))
        left = max(0.0, clock.left(running) - charged)
        if _turn_passed(state_before, state_after):
            left += settings.increment_s
        blue_s, red_s = (left, red_s) if running == "blue" else (blue_s, left)
    if over:
        return ClockState(settings, blue_s, red_s, None, None)
    actor = state_after.actor
    in_setup = isinstance(settings, LiveClock) and state_after.phase != "play"
    restarts = (
        actor != running
        or clock.since is None
        or clock.setup != in_setup
        or (isinstance(settings, LiveClock) and not in_setup)
    )
    since = arrived_at if restarts else clock.since
    return ClockState(settings, blue_s, red_s, actor, since, setup=in_setup)


def _turn_passed(state_before: State, state_after: State) -> bool:
    """Tells whether the action finished a turn of play and the next turn began (the engine's numbers)."""
    before, after = state_before.turn, state_after.turn
    return (
        state_before.phase == "play"
        and state_after.phase == "play"
        and before is not None
        and after is not None
        and after.number != before.number
    )


def credit_downtime(clock: ClockState, down_from: float, up_at: float) -> ClockState:
    """Returns the clock with the time the page could not be played (`down_from` … `up_at`) charged to
    nobody: the running side's `since`, and its deadline with it, move forward by the part of the
    downtime after `since` (lichess gives the players time back after a restart).

    >>> clock = ClockState(LiveClock(60), 60.0, 60.0, "blue", 100.0)
    >>> credit_downtime(clock, 130.0, 150.0).deadline, credit_downtime(clock, 50.0, 110.0).deadline
    (180.0, 170.0)
    """
    if clock.since is None or clock.running is None:
        return clock
    gap = up_at - max(down_from, clock.since)
    if not gap > 0:
        return clock
    return ClockState(
        clock.settings, clock.blue_s, clock.red_s, clock.running, clock.since + gap, clock.setup
    )


def view(clock: ClockState | None, now: float) -> dict[str, Any] | None:
    """Returns the snapshot's `clock`: the clock as created plus `blue_s`, `red_s` (the running side's
    counted down to `now`; on a live page in setup both stay `initial_s`; on a link page the running
    side's is what is left of its move), `running`, `deadline` and `now` (ISO 8601 UTC); None: no clock.

    >>> clock = ClockState(LinkClock(3600), 3600.0, 3600.0, "red", 0.0)
    >>> view(clock, now=600.0)
    {'per_move_s': 3600, 'blue_s': 3600.0, 'red_s': 3000.0, 'running': 'red',
     'deadline': '1970-01-01T01:00:00.000Z', 'now': '1970-01-01T00:10:00.000Z'}
    """
    if clock is None:
        return None
    blue_s, red_s = clock.blue_s, clock.red_s
    deadline = clock.deadline
    counts_down = not (isinstance(clock.settings, LiveClock) and clock.setup)
    if clock.running is not None and deadline is not None and counts_down:
        left = round(max(0.0, deadline - now), 3)
        blue_s, red_s = (left, red_s) if clock.running == "blue" else (blue_s, left)
    return {
        **clock.settings.to_json(),
        "blue_s": blue_s,
        "red_s": red_s,
        "running": clock.running,
        "deadline": None if deadline is None else iso_utc(deadline),
        "now": iso_utc(now),
    }


def iso_utc(seconds: float) -> str:
    """Returns a time as ISO 8601 UTC to the millisecond, with `Z`.

    >>> iso_utc(1796083200.25)
    '2026-12-01T00:00:00.250Z'
    """
    if not math.isfinite(seconds):
        raise ValueError(f"not a time: {seconds!r}")
    moment = datetime.fromtimestamp(seconds, tz=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
