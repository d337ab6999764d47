"""Winning (RULES.md §10): the page ends the moment a side has no living soldier, or on resignation."""

from __future__ import annotations

from collections.abc import Container, Sequence

from .state import State, evolve
from .values import Event, Side, Soldier


def end_page(state: State, winner: Side, reason: str) -> State:
    """Returns the state with the page over: the winner named, nobody to act."""
    return evolve(state, phase="over", winner=winner, end_reason=reason)


def game_over_event(winner: Side, reason: str) -> Event:
    """Returns the `game_over` event."""
    return {"type": "game_over", "winner": winner, "reason": reason}


def phase_over_event() -> Event:
    """Returns the `phase: over` event that closes a finished page's events."""
    return {"type": "phase", "phase": "over"}


def wiped_out(soldiers: Sequence[Soldier], side: Side, dead: Container[int]) -> bool:
    """Tells whether `side` has no living soldier once the soldiers at the `dead` indexes are crossed out."""
    return not any(s.alive and s.side == side and i not in dead for i, s in enumerate(soldiers))
