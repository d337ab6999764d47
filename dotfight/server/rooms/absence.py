"""A live page's absence as its room sees it (issue 19, item 4): when the page last moved, when each seat
was last seen leaving, and the `claim_at` its sockets were told.

The room of a live page keeps one `RoomAbsence` (the other modes have none, and their presence message
stays `{type, blue, red}`). Its facts are seeded when the room gets its first socket — when the page
last moved (the page row's `updated_at`: the commit of its last action) and the seats' departures as
the broadcast keeps them across processes, none earlier than when this process started (a restart
forgets nothing it must not: nobody is claimed against for an outage) — and then kept by the room: a
newer version heard moves `moved_at` to now, a seat the presence loses is `left_at` now. `claim_at` is
worked out again whenever the room's `changed()` runs (a version or the presence moved), never by a timer:
it is a moment the phones count down to themselves, and the claim is decided when it comes
(`dotfight/server/claims.py`).

The page's last move stands for "the turn passing to the side to act": the move that passed the turn
is the last one unless the side to act has moved since, and then it was there (or playing without a
socket), so counting from its own last move only ever gives it more time.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from dotfight.engine import Side, State
from dotfight.server.broadcast import SIDES, departed
from dotfight.server.pages.wire import compact_json
from dotfight.server.people.absence import absent_since, claim_at
from dotfight.server.people.clock import iso_utc
from dotfight.server.rooms.connection import PresenceKey

# Pages without a room here whose last move this process heard, kept (the oldest forgotten first).
MOVES_KEPT = 100_000


def side_to_act(state: State) -> Side | None:
    """Returns the side a claim would be against: the side to act, None once the page is over."""
    actor: Side | None = state.actor
    return None if state.phase == "over" else actor


def held(presence: PresenceKey, side: str) -> bool:
    """Tells whether `side` has a socket on the page in `presence` (blue, red)."""
    return presence[0] if side == "blue" else presence[1]


@dataclass(frozen=True)
class AbsenceFacts:
    """What a claim against the side to act is decided on: whether it has a socket on the page, when the
    page last moved, and when its last socket closed (None: not known, it never came)."""

    present: bool
    moved_at: float
    left_at: float | None


class RoomAbsence:
    """A live page's absence in its room: `actor` (the side to act, None once over) at `version`,
    `moved_at`, each seat's `left_at`, and `told` (the `claim_at` last told to the page's sockets)."""

    __slots__ = ("actor", "grace_s", "left_at", "moved_at", "now", "told", "version")

    def __init__(
        self,
        state: State,
        moved_at: float,
        left_at: Mapping[str, float],
        grace_s: float,
        now: Callable[[], float],
    ) -> None:
        self.grace_s = grace_s
        self.now = now
        self.version: int = state.version
        self.actor = side_to_act(state)
        self.moved_at = moved_at
        self.left_at: dict[str, float] = dict(left_at)
        self.told: float | None = None

    def saw(self, state: State) -> None:
        """A newer state of the page was heard: it moved now."""
        self.saw_move(state.version, side_to_act(state))

    def saw_move(self, version: int, actor: Side | None) -> None:
        """A newer version of the page was heard, with `actor` to act after it (None: over): it moved now."""
        if version > self.version:
            self.version = version
            self.actor = actor
            self.moved_at = self.now()

    def saw_presence(self, before: PresenceKey, after: PresenceKey) -> None:
        """The presence told moved from `before` to `after`: the seats it lost left now."""
        for side in departed(before, after):
            self.left_at[side] = self.now()

    def facts(self, presence: PresenceKey) -> AbsenceFacts | None:
        """Returns what a claim against the side to act is decided on, or None when the page is over."""
        actor = self.actor
        if actor is None:
            return None
        return AbsenceFacts(held(presence, actor), self.moved_at, self.left_at.get(actor))

    def claim_at(self, presence: PresenceKey) -> float | None:
        """Returns when the side waiting may claim the win (None: the side to act is here, or it is over)."""
        actor = self.actor
        if actor is None or held(presence, actor):
            return None  # over, or the side to act is here (asked at every version: no facts built)
        return claim_at(absent_since(False, self.moved_at, self.left_at.get(actor)), self.grace_s)

    def moved_on(self, presence: PresenceKey) -> bool:
        """Tells whether `claim_at` differs from what the sockets were told last."""
        return self.claim_at(presence) != self.told

    def message(self, presence: PresenceKey) -> str:
        """Serialises the live page's `{type: "presence", blue, red, claim_at}` (ISO 8601 UTC or null)."""
        at = self.claim_at(presence)
        return compact_json(
            {
                "type": "presence",
                "blue": presence[0],
                "red": presence[1],
                "claim_at": None if at is None else iso_utc(at),
            }
        )


class RecentMoves:
    """When pages without a room here last moved, as this process heard it (its own commits, a room's
    last word when it goes), so a live page's new room on one process seldom reads the store: only for
    a page this process has not heard move since it started, or has forgotten (bounded). With other
    processes the store is read too, since their moves of a page with no room here are not sent here
    (`Rooms.read_absence`).

    >>> moves = RecentMoves(kept=2)
    >>> moves.record("a", 1.0); moves.record("b", 2.0); moves.record("c", 3.0)
    >>> moves.known("a"), moves.take("c"), moves.known("c")
    (None, 3.0, None)
    """

    def __init__(self, kept: int = MOVES_KEPT) -> None:
        self._kept = kept
        self._at: OrderedDict[str, float] = OrderedDict()

    def record(self, page_id: str, at: float) -> None:
        """The page moved at `at` (the newest is kept last, the oldest forgotten beyond the bound)."""
        self._at.pop(page_id, None)
        self._at[page_id] = at
        if len(self._at) > self._kept:
            self._at.popitem(last=False)

    def known(self, page_id: str) -> float | None:
        """Returns when the page last moved as heard here (None: not known)."""
        return self._at.get(page_id)

    def take(self, page_id: str) -> float | None:
        """Returns and forgets when the page last moved (its room keeps it from now on)."""
        return self._at.pop(page_id, None)


def seeded_departures(departures: Mapping[str, float], started_at: float) -> dict[str, float]:
    """Returns each seat's last leaving as a new room counts it: what the broadcast kept, and never
    before this process started (every seat counts as gone when the server came back).

    >>> seeded_departures({"red": 50.0}, started_at=100.0), seeded_departures({"red": 150.0}, 100.0)
    ({'blue': 100.0, 'red': 100.0}, {'blue': 100.0, 'red': 150.0})
    """
    return {side: max(departures.get(side, started_at), started_at) for side in SIDES}
