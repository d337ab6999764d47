"""What the server knows of a page in memory, and the public views built from it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dotfight.engine import State, turn_options
from dotfight.store.records import PageRecord

# Bits of the bot's own generator seed (kept well inside a signed 64-bit integer for any database).
BOT_SEED_BITS = 62


@dataclass(frozen=True)
class BotSeat:
    """Dawood-bot's seat on a bot page; `seed` feeds the bot's own generator, never shown."""

    side: str
    strength: str
    seed: int

    def to_json(self) -> dict[str, Any]:
        """Returns the stored form."""
        return {"side": self.side, "strength": self.strength, "seed": self.seed}

    @classmethod
    def from_json(cls, stored: dict[str, Any]) -> BotSeat:
        """Reads the stored form back."""
        return cls(side=stored["side"], strength=stored["strength"], seed=int(stored["seed"]))


@dataclass(frozen=True)
class LoadedPage:
    """A page's fixed parts (as the store keeps them: the seed is 32 hex characters, secret until the
    page is over) and its engine state at the latest version."""

    meta: PageRecord
    state: State

    @property
    def bot(self) -> BotSeat | None:
        """Dawood-bot's seat on a bot page, else None."""
        return None if self.meta.bot is None else BotSeat.from_json(self.meta.bot)

    @property
    def over(self) -> bool:
        """Tells whether the page is over (and its seed may be shown)."""
        return bool(self.state.phase == "over")

    def revealed_seed(self) -> str | None:
        """Returns the seed once the page is over, else None."""
        return self.meta.seed if self.over else None

    def public_snapshot(self) -> dict[str, Any]:
        """The engine's public snapshot plus the page's id, mode, seed commitment and (when over) seed."""
        snapshot = self.state.snapshot()
        snapshot["id"] = self.meta.id
        snapshot["mode"] = self.meta.mode
        snapshot["seed_sha256"] = self.meta.seed_sha256
        snapshot["seed"] = self.revealed_seed()
        bot = self.bot
        snapshot["bot"] = None if bot is None else {"side": bot.side, "strength": bot.strength}
        snapshot["options"] = turn_options(self.state)
        return snapshot


def events_on_the_wire(
    state: State, events: Sequence[dict[str, Any]], version: int | None = None
) -> list[dict[str, Any]]:
    """Returns events as they are sent to clients: the last event carries `options`, what the page after
    them allows (`turn_options` of `state`, null outside play; CONTRACTS.md C6) — after a flick that
    keeps the turn (a bonus flick, a chain's link, a send) as after one that passes it, so a client
    never works out what is allowed itself. With `version` (the action's), options are added only while
    the page is still at that version (a repeated move answered later from the log, or an earlier
    action of a catch-up, is sent as stored). The events given are not changed, so the stored log stays
    exactly as the engine wrote it; `turn_options` is asked once per call, not per client.

    >>> from dotfight.engine import RuleSet, apply, new_page
    >>> page = new_page(RuleSet.preset("quick"), seed=7)
    >>> for side, kind in [("blue", "quick_setup"), ("blue", "ready"), ("red", "ready")]:
    ...     page, _ = apply(page, side, {"type": kind})
    >>> page, events = apply(page, "blue", {"type": "send", "from": "b3", "to": "b1", "soldiers": ["b3s1"]})
    >>> sent = events_on_the_wire(page, events)
    >>> [event["type"] for event in sent], sent[-1]["options"]["side"], sent[-1]["options"]["send"]
    (['send'], 'blue', None)
    >>> "options" in events[-1], events_on_the_wire(page, events, version=page.version - 1) == events
    (False, True)
    """
    sent = list(events)
    if not sent or (version is not None and version != state.version):
        return sent
    sent[-1] = {**sent[-1], "options": turn_options(state)}
    return sent


def status_of(state: State) -> str:
    """Returns the stored status of a page in this state: "over" or "open"."""
    return "over" if state.phase == "over" else "open"
