"""What one lab run plays: the rules, how many pages, which bots, and the seed everything comes from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dotfight.bot import STRENGTHS
from dotfight.bot.luck import derive_seed
from dotfight.engine import RuleSet

# A page still going after this many turns is a stalemate: stopped and counted apart.
DEFAULT_TURN_CAP = 300


@dataclass(frozen=True)
class LabConfig:
    """One lab run. `bot_red` defaults to `bot_blue`; with `alternate` the bots swap colours on odd pages."""

    preset: str = "classic"
    overrides: dict[str, Any] = field(default_factory=dict)
    games: int = 100
    seed: int = 0
    bot_blue: str = "easy"
    bot_red: str | None = None
    alternate: bool = False
    turn_cap: int = DEFAULT_TURN_CAP

    def __post_init__(self) -> None:
        if self.games < 1:
            raise ValueError("games must be at least 1")
        if self.turn_cap < 1:
            raise ValueError("turn_cap must be at least 1")
        for name in (self.bot_blue, self.red_strength):
            if name not in STRENGTHS:
                raise ValueError(f"unknown bot strength {name!r}: choose one of {', '.join(STRENGTHS)}")
        self.rules()  # validates the preset and every override (RuleSetError names the field)

    @property
    def red_strength(self) -> str:
        """The strength of the bot that plays red on even pages."""
        return self.bot_red or self.bot_blue

    def rules(self) -> RuleSet:
        """The rule set every page of the run is played with."""
        return RuleSet.preset(self.preset, **self.overrides)

    def strengths(self, index: int) -> tuple[str, str]:
        """(blue, red) strengths on page `index`."""
        if self.alternate and index % 2 == 1:
            return self.red_strength, self.bot_blue
        return self.bot_blue, self.red_strength

    def page_seed(self, index: int) -> int:
        """Page `index`'s 128-bit seed: a function of (run seed, index) only."""
        return derive_seed("lab-page", self.seed, index)

    def bot_seed(self, index: int, side: str) -> int:
        """The seed of the bot playing `side` on page `index`."""
        return derive_seed("lab-bot", self.seed, index, side) % 2**63

    def to_json(self) -> dict[str, Any]:
        """The run's settings as the report records them."""
        return {
            "preset": self.preset,
            "overrides": dict(self.overrides),
            "games": self.games,
            "seed": self.seed,
            "bots": {"blue": self.bot_blue, "red": self.red_strength},
            "alternate": self.alternate,
            "turn_cap": self.turn_cap,
        }
