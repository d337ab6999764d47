"""What the server knows of a page in memory, and the public views built from it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from dotfight.engine import State
from dotfight.store.models import PageRow


@dataclass(frozen=True)
class BotSeat:
    """Dawood-bot's seat on a bot page; `seed` feeds the bot's own generator, never shown."""

    side: str
    strength: str
    seed: int

    def to_json(self) -> dict[str, Any]:
        """Returns the stored form."""
        return {"side": self.side, "strength": self.strength, "seed": self.seed}


@dataclass(frozen=True)
class PageMeta:
    """The parts of a page that never change after creation."""

    id: str
    mode: str
    preset: str
    rules: dict[str, Any]
    seed: str  # 32 hex characters; secret until the page is over
    seed_sha256: str
    bot: BotSeat | None
    created_at: datetime

    @classmethod
    def from_row(cls, row: PageRow) -> PageMeta:
        """Reads the fixed parts of a page row."""
        bot = None
        if row.bot is not None:
            bot = BotSeat(side=row.bot["side"], strength=row.bot["strength"], seed=int(row.bot["seed"]))
        return cls(
            id=row.id,
            mode=row.mode,
            preset=row.preset,
            rules=row.rules,
            seed=row.seed,
            seed_sha256=row.seed_sha256,
            bot=bot,
            created_at=row.created_at,
        )


@dataclass(frozen=True)
class LoadedPage:
    """A page's fixed parts and its engine state at the latest version."""

    meta: PageMeta
    state: State

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
        bot = self.meta.bot
        snapshot["bot"] = None if bot is None else {"side": bot.side, "strength": bot.strength}
        return snapshot


def status_of(state: State) -> str:
    """Returns the stored status of a page in this state: "over" or "open"."""
    return "over" if state.phase == "over" else "open"


def iso_utc(moment: datetime) -> str:
    """Writes a moment as ISO 8601 in UTC (SQLite hands back naive datetimes, stored as UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat()
