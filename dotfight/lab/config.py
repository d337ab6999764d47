"""What one lab run plays: the rules, how many pages, which bots, and the seed everything comes from."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from dotfight.bot import POLICIES, STRENGTHS, DawoodBot
from dotfight.bot.luck import derive_seed
from dotfight.engine import RuleSet, State

# The bot's policies, in the order `--red-policy` offers them.
KNOWN_POLICIES: tuple[str, ...] = tuple(POLICIES)
# A page still going after this many turns is a stalemate: stopped and counted apart.
DEFAULT_TURN_CAP = 300
# The bot's policy when none is named: the whole game (lunges and men standing outside included).
FULL_POLICY = "full"
# Walls that cost nothing: the twin pages of the walls/free-walls length ratio play with these.
FREE_WALLS: dict[str, float] = {
    "wall_loss_empty": 0.0,
    "wall_loss_full": 0.0,
    "shake_empty": 0.0,
    "shake_full": 0.0,
}


def player_label(strength: str, policy: str) -> str:
    """The name of a player in the report: its strength, with `+policy` unless the policy is full."""
    return strength if policy == FULL_POLICY else f"{strength}+{policy}"


# The reference players that stand for people (`dotfight.lab.players`): they have no policy but the
# one they model, so they play only with the full one.
REFERENCE_PLAYERS: tuple[str, ...] = ("novice", "random")
# Every player a lab page may seat: Dawood-bot's strengths, then the reference players.
KNOWN_PLAYERS: tuple[str, ...] = (*STRENGTHS, *REFERENCE_PLAYERS)


class Player(Protocol):
    """Anything that plays one side of a page: Dawood-bot or a reference player."""

    def choose(self, state: State, budget_s: float | None = None) -> dict[str, Any]: ...


def make_bot(strength: str, seed: int, policy: str) -> Player:
    """The player of one side of a lab page: a Dawood-bot strength or a reference player."""
    if strength in REFERENCE_PLAYERS:
        from dotfight.lab.players import NoviceBot, RandomBot

        return NoviceBot(seed) if strength == "novice" else RandomBot(seed)
    return DawoodBot(strength, seed=seed, policy=policy)


@dataclass(frozen=True)
class LabConfig:
    """One lab run. `bot_red` defaults to `bot_blue`; with `alternate` the bots swap colours on odd pages.

    With `free_walls` every wall costs nothing (no loss, no shake): the twin run of the walls/free-walls
    length ratio, played on the same seeds.
    """

    preset: str = "classic"
    overrides: dict[str, Any] = field(default_factory=dict)
    games: int = 100
    seed: int = 0
    bot_blue: str = "easy"
    bot_red: str | None = None
    alternate: bool = False
    turn_cap: int = DEFAULT_TURN_CAP
    policy_blue: str = FULL_POLICY
    policy_red: str = FULL_POLICY
    free_walls: bool = False

    def __post_init__(self) -> None:
        if self.games < 1:
            raise ValueError("games must be at least 1")
        if self.turn_cap < 1:
            raise ValueError("turn_cap must be at least 1")
        for name in (self.bot_blue, self.red_strength):
            if name not in KNOWN_PLAYERS:
                raise ValueError(f"unknown bot strength {name!r}: choose one of {', '.join(KNOWN_PLAYERS)}")
        for name, policy in ((self.bot_blue, self.policy_blue), (self.red_strength, self.policy_red)):
            if policy not in POLICIES:
                raise ValueError(f"unknown bot policy {policy!r}: choose one of {', '.join(POLICIES)}")
            if name in REFERENCE_PLAYERS and policy != FULL_POLICY:
                raise ValueError(f"the {name} player has no policy but its own: leave it {FULL_POLICY!r}")
        self.rules()  # validates the preset and every override (RuleSetError names the field)

    @property
    def red_strength(self) -> str:
        """The strength of the bot that plays red on even pages."""
        return self.bot_red or self.bot_blue

    @property
    def player_a(self) -> str:
        """The player that is blue on even pages ("blue" in the settings)."""
        return player_label(self.bot_blue, self.policy_blue)

    @property
    def player_b(self) -> str:
        """The player that is red on even pages."""
        return player_label(self.red_strength, self.policy_red)

    def rules(self) -> RuleSet:
        """The rule set every page of the run is played with."""
        rules = RuleSet.preset(self.preset, **self.overrides)
        return rules.replace(**FREE_WALLS) if self.free_walls else rules

    def twin(self) -> LabConfig:
        """The same run with walls that cost nothing (same seeds, same bots)."""
        return replace(self, free_walls=True)

    def players(self, index: int) -> tuple[tuple[str, str], tuple[str, str]]:
        """((strength, policy) of blue, (strength, policy) of red) on page `index`."""
        a = (self.bot_blue, self.policy_blue)
        b = (self.red_strength, self.policy_red)
        return (b, a) if self.alternate and index % 2 == 1 else (a, b)

    def side_of_a(self, index: int) -> str:
        """The colour player a (`bot_blue`, `policy_blue`) plays on page `index`."""
        return "red" if self.alternate and index % 2 == 1 else "blue"

    def strengths(self, index: int) -> tuple[str, str]:
        """(blue, red) strengths on page `index`."""
        (blue, _), (red, _) = self.players(index)
        return blue, red

    def labels(self, index: int) -> tuple[str, str]:
        """(blue, red) player labels on page `index`."""
        blue, red = self.players(index)
        return player_label(*blue), player_label(*red)

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
            "policies": {"blue": self.policy_blue, "red": self.policy_red},
            "alternate": self.alternate,
            "turn_cap": self.turn_cap,
            "free_walls": self.free_walls,
        }
