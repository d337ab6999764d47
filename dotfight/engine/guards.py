"""Who may act when: the phase and turn checks shared by every action."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import GAME_OVER, NOT_YOUR_TURN, IllegalAction
from .values import Phase, Side, Soldier

if TYPE_CHECKING:  # only read: the state's views ask `standing` (through flick.holds)
    from .state import State


def require_phase(state: State, phase: Phase, action: str) -> None:
    """Refuses an action made outside its phase (code `game_over` once the page is over)."""
    if state.phase == "over":
        raise IllegalAction("game_over", f"the page is over; {action} is no longer possible", GAME_OVER)
    if state.phase != phase:
        raise IllegalAction(
            "wrong_phase", f"{action} belongs to the {phase} phase; the page is in {state.phase}"
        )


def require_actor(state: State, side: Side, action: str) -> None:
    """Refuses an action by the side whose move it is not (code `not_your_turn`)."""
    if state.actor != side:
        raise IllegalAction(
            "not_your_turn", f"{action}: it is {state.actor}'s move, not {side}'s", NOT_YOUR_TURN
        )


def require_standing(state: State, side: Side, soldier_id: str, action: str, on_road: str) -> Soldier:
    """Refuses an action by a soldier who is not the side's, is crossed out, or walks on the road
    (`on_road` says why that matters for this action); returns the soldier.

    >>> from dotfight.engine import RuleSet, apply, new_page
    >>> page, _ = apply(new_page(RuleSet.preset("quick"), seed=7), "blue", {"type": "quick_setup"})
    >>> require_standing(page, "blue", "b1s1", "flick", "is on the road").id
    'b1s1'
    >>> require_standing(page, "blue", "b2s1", "flick", "is on the road")
    Traceback (most recent call last):
    ...
    dotfight.engine.errors.IllegalAction: flick: b2s1 is red's soldier
    """
    soldier = state.soldier(soldier_id)
    if standing(soldier, side):
        return soldier
    if soldier.side != side:
        raise IllegalAction("not_your_soldier", f"{action}: {soldier_id} is {soldier.side}'s soldier")
    if not soldier.alive:
        raise IllegalAction("soldier_dead", f"{action}: {soldier_id} is crossed out")
    if soldier.on_road:
        raise IllegalAction("on_road", f"{action}: {soldier_id} {on_road}")
    return soldier


def standing(soldier: Soldier, side: Side) -> bool:
    """Tells whether `require_standing` accepts the soldier for the side: the side's, not crossed out, not
    on the road (the rule questions ask this of every soldier at once rather than catch refusals).

    >>> from dotfight.engine import RuleSet, apply, new_page
    >>> page, _ = apply(new_page(RuleSet.preset("quick"), seed=7), "blue", {"type": "quick_setup"})
    >>> standing(page.soldier("b1s1"), "blue"), standing(page.soldier("b2s1"), "blue")
    (True, False)
    """
    return soldier.side == side and soldier.alive and not soldier.on_road
