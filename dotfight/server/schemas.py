"""The shapes of what crosses the wire, per direction: what clients send (strict) and what they get."""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    StrictStr,
    StringConstraints,
    field_validator,
    model_validator,
)

from dotfight.engine.actions import SERVER_ONLY_ACTIONS
from dotfight.server.pages.authority import CreatePage

Side = Literal["blue", "red"]
Mode = Literal["local", "bot", "link", "live"]
Preset = Literal["classic", "quick", "dawood", "custom"]
# Dawood-bot's levels, lowest first (dotfight.bot.strength.STRENGTHS; a test keeps the two the same).
# "easy", "normal" and "hard" are the names stored with pages made before the ladder (issue 23).
Strength = Literal["beginner", "easy", "steady", "normal", "hard"]

SEED_LIMIT = 2**128
# Deepest nesting a client's free-form JSON (an action, rule overrides) may have.
MAX_JSON_DEPTH = 6

# The largest whole number a client may send where the server compares or stores it (versions, the log's
# `from` and `limit`): the columns are `Integer`, 32 bits on PostgreSQL (SQLite's hold 64), and a larger
# parameter made the database driver fail with a 500 rather than answer.
MAX_STORED_INT = 2**31 - 1

MoveId = Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9._:-]+$")]
Token = Annotated[str, StringConstraints(min_length=1, max_length=128)]
Version = Annotated[StrictInt, Field(ge=0, le=MAX_STORED_INT)]


def ensure_plain_json(value: object, depth: int = 0) -> None:
    """Refuses (ValueError) NaN, infinities and deep nesting anywhere inside free-form JSON."""
    if depth > MAX_JSON_DEPTH:
        raise ValueError("nested too deeply")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("numbers must be finite")
    if isinstance(value, dict):
        for key, item in value.items():
            ensure_plain_json(key, depth + 1)
            ensure_plain_json(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            ensure_plain_json(item, depth + 1)


def client_action(action: dict[str, Any]) -> dict[str, Any]:
    """Refuses (ValueError) what a client may never send as an action: non-finite numbers, deep
    nesting, the actions only the server writes (`time_out`, `abandon`), and a `claim` with fields.
    Everything else is the engine's to judge (or, for `claim`, the server's: dotfight/server/claims.py).
    """
    ensure_plain_json(action)
    kind = action.get("type")
    if kind in SERVER_ONLY_ACTIONS:
        raise ValueError(f"{kind} is written by the server, never sent by a client")
    if kind == "claim" and set(action) != {"type"}:
        raise ValueError("claim takes no fields")
    return action


class Incoming(BaseModel):
    """Base of everything a client sends: unknown fields and non-finite numbers are refused."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True)


class BotIn(Incoming):
    """Dawood-bot's seat on a bot page."""

    strength: Strength = "normal"
    side: Side = "red"


class LiveClockIn(Incoming):
    """A live page's clock (Fischer): each side's time and what each finished turn of play adds, in
    whole seconds."""

    initial_s: Annotated[StrictInt, Field(ge=15, le=10_800)]
    increment_s: Annotated[StrictInt, Field(ge=0, le=180)]


class LinkClockIn(Incoming):
    """A link page's clock: the time the side to act has for each of its turns, in whole seconds."""

    per_move_s: Annotated[StrictInt, Field(ge=3_600, le=1_209_600)]


# The clock each mode may take (PROTOCOL.md, "Time, absence, rematch and phrases"); no other mode has one.
CLOCK_OF_MODE: dict[str, type[LiveClockIn | LinkClockIn]] = {"live": LiveClockIn, "link": LinkClockIn}


class PageCreate(Incoming):
    """`POST /api/pages`: a new page."""

    preset: Preset = "classic"
    rules: dict[str, Any] | None = None
    mode: Mode
    seed: StrictInt | StrictStr | None = None
    bot: BotIn | None = None
    clock: LiveClockIn | LinkClockIn | None = None

    @field_validator("rules")
    @classmethod
    def _plain_rules(cls, rules: dict[str, Any] | None) -> dict[str, Any] | None:
        ensure_plain_json(rules)
        return rules

    @field_validator("seed")
    @classmethod
    def _seed_in_range(cls, seed: int | str | None) -> int | str | None:
        if seed is not None:
            parse_seed(seed)
        return seed

    @model_validator(mode="after")
    def _fields_fit_mode(self) -> PageCreate:
        if self.seed is not None and self.mode != "local":
            raise ValueError("a chosen seed is only allowed in local mode")
        if self.bot is not None and self.mode != "bot":
            raise ValueError("bot settings are only allowed in bot mode")
        if self.clock is not None:
            wanted = CLOCK_OF_MODE.get(self.mode)
            if wanted is None:
                raise ValueError("a clock is only allowed in live and link mode")
            if not isinstance(self.clock, wanted):
                shape = "{initial_s, increment_s}" if self.mode == "live" else "{per_move_s}"
                raise ValueError(f"a {self.mode} page's clock is {shape}")
        return self

    def seed_value(self) -> int | None:
        """Returns the chosen seed as an int, or None."""
        return None if self.seed is None else parse_seed(self.seed)

    def command(self, bot_seed: int | None = None) -> CreatePage:
        """Returns the page authority's command for this body (`bot_seed`: the bot's generator seed).

        >>> PageCreate(preset="quick", mode="bot").command(bot_seed=5).bot_side
        'red'
        """
        wanted = self.bot or BotIn()
        return CreatePage(
            preset=self.preset,
            rules=self.rules,
            seed=self.seed_value(),
            mode=self.mode,
            bot_side=wanted.side,
            bot_strength=wanted.strength,
            bot_seed=bot_seed or 0,
            clock=None if self.clock is None else self.clock.model_dump(),
        )


def parse_seed(seed: int | str) -> int:
    """Reads a seed given as an int or as up to 32 hex digits; raises ValueError when out of range."""
    if isinstance(seed, str):
        if not 1 <= len(seed) <= 32 or any(ch not in "0123456789abcdefABCDEF" for ch in seed):
            raise ValueError("a seed string must be 1 to 32 hex digits")
        return int(seed, 16)
    if not 0 <= seed < SEED_LIMIT:
        raise ValueError("a seed must be at least 0 and below 2**128")
    return seed


class ActionIn(Incoming):
    """`POST /api/pages/{id}/actions`: one action at the version the client saw."""

    action: dict[str, Any]
    version: Version
    move_id: MoveId | None = None

    @field_validator("action")
    @classmethod
    def _client_action(cls, action: dict[str, Any]) -> dict[str, Any]:
        return client_action(action)


class HelloMessage(Incoming):
    """WebSocket: the first message; without a token the connection only watches."""

    type: Literal["hello"]
    token: Token | None = None
    version: Version | None = None


class ActionMessage(Incoming):
    """WebSocket: one action, with the client's own id for safe retries."""

    type: Literal["action"]
    action: dict[str, Any]
    version: Version
    move_id: MoveId

    @field_validator("action")
    @classmethod
    def _client_action(cls, action: dict[str, Any]) -> dict[str, Any]:
        return client_action(action)


# A phrase as sent; whether it is one of the list is the people model's to say (people/phrases.py).
PhraseText = Annotated[StrictStr, StringConstraints(max_length=64)]


class SayIn(Incoming):
    """`POST /api/pages/{id}/say`: one of the fixed phrases."""

    phrase: PhraseText


class SayMessage(Incoming):
    """WebSocket: one of the fixed phrases, to every socket of the page."""

    type: Literal["say"]
    phrase: PhraseText


ClientMessage = Annotated[HelloMessage | ActionMessage | SayMessage, Field(discriminator="type")]


class Links(BaseModel):
    """Absolute links of a page: one per seat (None for Dawood-bot's) and one to watch."""

    blue: str | None
    red: str | None
    watch: str


class Seats(BaseModel):
    """Seat tokens, shown once at creation (None for Dawood-bot's seat)."""

    blue: str | None
    red: str | None


class PageCreated(BaseModel):
    """The answer to `POST /api/pages`."""

    id: str
    seats: Seats
    links: Links
    seed_sha256: str
    snapshot: dict[str, Any]


class BotSummary(BaseModel):
    """Dawood-bot's seat and level on a bot page (its seed stays private)."""

    side: Side
    strength: str


class PageSummary(BaseModel):
    """One line of the exercise book: `GET /api/pages?ids=`."""

    id: str
    mode: Mode
    preset: str
    status: str
    winner: Side | None
    version: int
    phase: str
    side_to_act: Side | None
    bot: BotSummary | None = None
    created_at: str
    updated_at: str
    clock: dict[str, int] | None = None  # the clock as created
    deadline: str | None = None  # when the running side's time ends, ISO 8601 UTC with Z
    running: Side | None = None
    reason: str | None = None  # how a finished page ended: the `game_over` reason


class ActionResult(BaseModel):
    """The answer to an applied action."""

    version: int
    events: list[dict[str, Any]]


class Health(BaseModel):
    """The answer to `GET /api/health`."""

    status: Literal["ok"]
    version: str
