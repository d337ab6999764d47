"""Plays one page bot against bot and keeps what the report needs, turn by turn.

Per turn it notes how many flicks were made and, for the side waiting (the defender), which of its living
men stood inside one of its own bases at the start of the turn and which of them were crossed out by the
start of the next turn (see docs/LAB.md for the exact definition).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from dotfight.bot import DawoodBot
from dotfight.bot.board import Board, other
from dotfight.engine import apply, new_page
from dotfight.lab.config import LabConfig


@dataclass
class PageRecord:
    """What one page told: its ending, its length and its flicks, and men exposed versus crossed out."""

    index: int
    blue: str  # strength of the bot playing blue
    red: str
    winner: str | None
    end: str  # "all_crossed_out" | "resigned" | "turn_cap"
    turns: int
    flicks: int
    lunges: int
    longest_turn_flicks: int
    inside_men: int = 0
    inside_crossed: int = 0
    outside_men: int = 0
    outside_crossed: int = 0
    actions: int = 0

    def to_json(self) -> dict[str, Any]:
        """The record as plain JSON."""
        return asdict(self)


class _Watch:
    """Follows one defender's men through one enemy turn."""

    def __init__(self, board: Board, defender: str) -> None:
        men = board.living(defender)
        self.inside = [int(k) for k in men if board.home[k] >= 0]
        self.outside = [int(k) for k in men if board.home[k] < 0]

    def close(self, board: Board, record: PageRecord) -> None:
        record.inside_men += len(self.inside)
        record.outside_men += len(self.outside)
        record.inside_crossed += sum(1 for k in self.inside if not board.alive[k])
        record.outside_crossed += sum(1 for k in self.outside if not board.alive[k])


def play_page(config: LabConfig, index: int) -> PageRecord:
    """Plays page `index` of the run to its end or to the turn cap."""
    rules = config.rules()
    blue_strength, red_strength = config.strengths(index)
    bots = {
        "blue": DawoodBot(blue_strength, seed=config.bot_seed(index, "blue")),
        "red": DawoodBot(red_strength, seed=config.bot_seed(index, "red")),
    }
    state = new_page(rules, config.page_seed(index))
    record = PageRecord(index, blue_strength, red_strength, None, "turn_cap", 0, 0, 0, 0)
    watch: _Watch | None = None
    turn_flicks = 0
    while state.actor is not None:
        side = state.actor
        action = bots[side].choose(state)
        state, events = apply(state, side, action)
        record.actions += 1
        turned = False
        for event in events:
            kind = event["type"]
            if kind == "ink":
                record.flicks += 1
                turn_flicks += 1
                record.lunges += event["kind"] == "lunge"
            elif kind == "turn":
                record.longest_turn_flicks = max(record.longest_turn_flicks, turn_flicks)
                turn_flicks = 0
                record.turns += 1
                turned = True
        if turned or state.actor is None:
            board = Board.of(state)
            if watch is not None:
                watch.close(board, record)
                watch = None
            if state.actor is not None and record.turns <= config.turn_cap:
                watch = _Watch(board, other(state.actor))
        if record.turns > config.turn_cap:
            record.turns = config.turn_cap
            break
    record.longest_turn_flicks = max(record.longest_turn_flicks, turn_flicks)
    if state.actor is None:
        record.winner = state.winner
        record.end = state.end_reason or "all_crossed_out"
    return record
