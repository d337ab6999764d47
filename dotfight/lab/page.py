"""Plays one page bot against bot and keeps what the report needs, turn by turn.

Per turn it notes how many flicks were made and, for the side waiting (the defender), which of its living
men stood inside one of its own bases at the start of the turn and which of them were crossed out by the
start of the next turn (see docs/LAB.md for the exact definition). Per side it counts the flick mix:
snipes, lunges, chain links, two-with-one-bullet bonuses, sends and what each kind crossed out. At the
end it keeps how the page ended and what the final blow was.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from dotfight.engine import State, apply, new_page
from dotfight.engine.flick import holds
from dotfight.lab.config import LabConfig, make_bot

SIDES = ("blue", "red")
# A page whose bots have not finished setting up after this many actions is stuck (a bot that keeps
# re-arranging): stopped and counted apart as "setup_cap". A sane setup takes a few dozen at most.
SETUP_CAP = 100
# The per-side counters of the flick mix (docs/LAB.md, "flick_mix").
MIX_KEYS = (
    "snipes",
    "lunges",
    "chain_lunges",
    "two_with_one_bullet",
    "sends",
    "snipe_kills",
    "lunge_kills",
    "lungers_lost",
)


def _empty_mix() -> dict[str, dict[str, int]]:
    return {side: dict.fromkeys(MIX_KEYS, 0) for side in SIDES}


@dataclass
class PageRecord:
    """What one page told: its ending, its length and its flicks, and men exposed versus crossed out."""

    index: int
    blue: str  # the player on blue: its strength, with "+policy" when the policy is not "full"
    red: str
    winner: str | None
    end: str  # "all_crossed_out" | "resigned" | "turn_cap" | "setup_cap"
    turns: int
    flicks: int
    lunges: int
    longest_turn_flicks: int
    inside_men: int = 0
    inside_crossed: int = 0
    outside_men: int = 0
    outside_crossed: int = 0
    actions: int = 0
    final_blow: str | None = (
        None  # cause of the crossing-out that ended the page (snipe, lunge, shot, off_page)
    )
    mix: dict[str, dict[str, int]] = field(default_factory=_empty_mix)

    @property
    def rounds(self) -> int:
        """Rounds of the page: a round is one turn of each side, the last one possibly half played."""
        return (self.turns + 1) // 2

    def to_json(self) -> dict[str, Any]:
        """The record as plain JSON."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PageRecord:
        """The record `to_json` wrote."""
        return cls(**data)


def inside_own_base(state: State, side: str) -> tuple[list[str], list[str]]:
    """The side's living men split into (inside one of its own bases and off the road, the rest)."""
    bases = state.bases_of(side)  # type: ignore[arg-type]
    inside: list[str] = []
    outside: list[str] = []
    for man in state.living(side):  # type: ignore[arg-type]
        sheltered = any(holds(man, base) for base in bases)
        (inside if sheltered else outside).append(man.id)
    return inside, outside


class _Watch:
    """Follows one defender's men through one enemy turn."""

    def __init__(self, state: State, defender: str) -> None:
        self.inside, self.outside = inside_own_base(state, defender)

    def close(self, state: State, record: PageRecord) -> None:
        record.inside_men += len(self.inside)
        record.outside_men += len(self.outside)
        record.inside_crossed += sum(1 for sid in self.inside if not state.soldier(sid).alive)
        record.outside_crossed += sum(1 for sid in self.outside if not state.soldier(sid).alive)


def _count(record: PageRecord, state: State, side: str, events: list[dict[str, Any]], chain: bool) -> None:
    """Adds one action's events to the page's figures (the flick mix of `side`, the final blow)."""
    mix = record.mix[side]
    last_cause: str | None = None
    for event in events:
        kind = event["type"]
        if kind == "ink":
            record.flicks += 1
            if event["kind"] == "lunge":
                record.lunges += 1
                mix["chain_lunges" if chain else "lunges"] += 1
            else:
                mix["snipes"] += 1
        elif kind == "send":
            mix["sends"] += 1
        elif kind == "bonus" and event["reason"] == "two_with_one_bullet":
            mix["two_with_one_bullet"] += 1
        elif kind == "crossed_out":
            cause = event["cause"]
            victim = state.soldier(event["soldier"]).side
            if cause in ("snipe", "lunge") and victim != side:
                mix[f"{cause}_kills"] += 1
            elif cause in ("shot", "off_page"):
                record.mix[victim]["lungers_lost"] += 1
            last_cause = cause
        elif kind == "game_over" and event["reason"] == "all_crossed_out":
            record.final_blow = last_cause


def play_page(config: LabConfig, index: int) -> PageRecord:
    """Plays page `index` of the run to its end or to the turn cap."""
    rules = config.rules()
    (blue_strength, blue_policy), (red_strength, red_policy) = config.players(index)
    bots = {
        "blue": make_bot(blue_strength, config.bot_seed(index, "blue"), blue_policy),
        "red": make_bot(red_strength, config.bot_seed(index, "red"), red_policy),
    }
    state = new_page(rules, config.page_seed(index))
    blue, red = config.labels(index)
    record = PageRecord(index, blue, red, None, "turn_cap", 0, 0, 0, 0)
    watch: _Watch | None = None
    turn_flicks = 0
    while state.actor is not None:
        side = state.actor
        action = bots[side].choose(state)
        chain = action.get("type") == "flick" and state.turn is not None and state.turn.chain is not None
        flicks_before = record.flicks
        state, events = apply(state, side, action)
        record.actions += 1
        _count(record, state, side, events, chain)
        turn_flicks += record.flicks - flicks_before
        turned = False
        for event in events:
            if event["type"] == "turn":
                record.longest_turn_flicks = max(record.longest_turn_flicks, turn_flicks)
                turn_flicks = 0
                record.turns += 1
                turned = True
        if turned or state.actor is None:
            if watch is not None:
                watch.close(state, record)
                watch = None
            if state.actor is not None and record.turns <= config.turn_cap:
                watch = _Watch(state, "red" if state.actor == "blue" else "blue")
        if record.turns > config.turn_cap:
            record.turns = config.turn_cap
            break
        if record.turns == 0 and record.actions >= SETUP_CAP:
            record.end = "setup_cap"
            break
    record.longest_turn_flicks = max(record.longest_turn_flicks, turn_flicks)
    if state.actor is None:
        record.winner = state.winner
        record.end = state.end_reason or "all_crossed_out"
    return record
