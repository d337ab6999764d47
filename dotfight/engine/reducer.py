"""`apply`: one action in, the next state and its events out. The only entry point that checks."""

from __future__ import annotations

import math
from typing import Any

from .actions import (
    Abandon,
    Action,
    DrawBase,
    Flick,
    Position,
    QuickSetup,
    Ready,
    Resign,
    Send,
    Stop,
    TimeOut,
    parse_action,
    parse_side,
)
from .errors import IllegalAction
from .guards import require_actor, require_phase, require_standing
from .lunge import resolve_lunge
from .send import check_send, send
from .setup import (
    check_draw_base,
    check_position,
    check_quick_setup,
    check_ready,
    draw_base,
    position,
    quick_setup,
    ready,
)
from .snipe import resolve_snipe
from .state import State, evolve
from .turns import check_resign, check_stop, finish_flick, resign, stop
from .values import Event, Side, Turn


def apply(state: State, side: str, action: Any) -> tuple[State, list[Event]]:
    """Applies one PROTOCOL.md action by `side` ("blue" | "red", the acting seat) and returns the new
    state and the events, in the order they happened.

    Raises MalformedAction (code "bad_request") for input that is not a well-formed action, and
    IllegalAction (code "not_your_turn" | "illegal_action" | "game_over") for a well-formed action the
    rules forbid now. The given state is never changed.

    >>> from dotfight.engine import EngineError, RuleSet, apply, new_page
    >>> page = new_page(RuleSet.preset("quick"), seed=7)
    >>> page, events = apply(page, "blue", {"type": "draw_base", "x": 500, "y": 1100, "r": 80})
    >>> events
    [{'type': 'base_drawn', 'base': {'id': 'b1', 'side': 'blue', 'x': 500.0, 'y': 1100.0, 'r': 80.0},
      'soldiers': [{'id': 'b1s1', 'x': 500.0, 'y': 1100.0}, ...]}]
    >>> page.version, page.actor, len(page.soldiers)
    (1, 'red', 8)

    A refusal carries the wire `code` and a stable `reason`, and changes nothing:

    >>> try:
    ...     apply(page, "red", {"type": "draw_base", "x": 500, "y": 1000, "r": 80})
    ... except EngineError as refusal:
    ...     print(refusal.code, refusal.reason)
    ...     print(refusal.message)
    illegal_action wrong_half
    draw_base: red's bases lie wholly in y ≤ 700; a base at (500, 1000) of radius 80 spans y 920–1080
    >>> try:
    ...     apply(page, "blue", {"type": "draw_base", "x": 500, "y": 300, "r": 80})
    ... except EngineError as refusal:
    ...     print(refusal.code, refusal.reason)
    not_your_turn not_your_turn
    >>> try:
    ...     apply(page, "red", {"type": "draw_base", "x": "here", "y": 300, "r": 80})
    ... except EngineError as refusal:
    ...     print(type(refusal).__name__, refusal.code)
    MalformedAction bad_request
    >>> page.version, len(page.bases)
    (1, 1)
    """
    actor = parse_side(side)
    parsed = parse_action(state, action)
    # Every handler starts with its action's check (`check_action` asks the same ones, and only them).
    if isinstance(parsed, Resign):
        new_state, events = resign(state, actor)
    elif isinstance(parsed, TimeOut):
        new_state, events = resign(state, actor, "time")
    elif isinstance(parsed, Abandon):
        new_state, events = resign(state, actor, "abandoned")
    elif isinstance(parsed, Flick):
        new_state, events = flick(state, actor, parsed)
    elif isinstance(parsed, Send):
        new_state, events = send(state, actor, parsed)
    elif isinstance(parsed, Stop):
        new_state, events = stop(state, actor)
    elif isinstance(parsed, DrawBase):
        new_state, events = draw_base(state, actor, parsed)
    elif isinstance(parsed, QuickSetup):
        new_state, events = quick_setup(state, actor)
    elif isinstance(parsed, Position):
        new_state, events = position(state, actor, parsed)
    else:
        assert isinstance(parsed, Ready)
        new_state, events = ready(state, actor)
    if new_state is state:
        return evolve(state, version=state.version + 1), events
    # Every other state a handler returns was made by evolve within this call and is seen by nobody
    # else yet: its version is set in place rather than copied into one more state (a dictionary copy
    # and its views' bookkeeping, ~1 µs of a soft snipe's ~30).
    new_state.__dict__["version"] = state.version + 1
    return new_state, events


def check_action(state: State, side: Side, action: Action) -> None:
    """Raises the IllegalAction `apply` would raise for this parsed action, without resolving it or
    drawing from the page's generator; returns None when `apply` would accept it.

    >>> from dotfight.engine import RuleSet, new_page
    >>> from dotfight.engine.actions import Stop
    >>> check_action(new_page(RuleSet.preset("quick"), seed=7), "blue", Stop())
    Traceback (most recent call last):
    ...
    dotfight.engine.errors.IllegalAction: stop belongs to the play phase; the page is in bases
    """
    if isinstance(action, Resign | TimeOut | Abandon):
        check_resign(state, side)
    elif isinstance(action, Flick):
        check_flick(state, side, action)
    elif isinstance(action, Send):
        check_send(state, side, action)
    elif isinstance(action, Stop):
        check_stop(state, side)
    elif isinstance(action, DrawBase):
        check_draw_base(state, side, action)
    elif isinstance(action, QuickSetup):
        check_quick_setup(state, side)
    elif isinstance(action, Position):
        check_position(state, side, action)
    else:
        check_ready(state, side)


def flick(state: State, side: Side, action: Flick) -> tuple[State, list[Event]]:
    """Checks a flick, counts it against the turn, resolves it, and passes the turn when it is spent.

    >>> from dotfight.engine.actions import Flick
    >>> from dotfight.engine.reducer import flick
    >>> from dotfight.engine import RuleSet, apply, new_page
    >>> page = new_page(RuleSet.preset("quick", wildness=0), seed=7)  # launches go exactly where aimed
    >>> for side, kind in [("blue", "quick_setup"), ("blue", "ready"), ("red", "ready")]:
    ...     page, _ = apply(page, side, {"type": kind})
    >>> after, events = flick(page, "blue", Flick("b3s1", "snipe", (0.0, -300.0)))
    >>> [event["type"] for event in events]
    ['ink', 'wall', 'wall', 'crossed_out', 'crossed_out', 'wall', 'bonus']
    >>> after.turn.flicks_left  # the flick was spent, then two with one bullet gave it back
    1
    """
    check_flick(state, side, action)
    turn = state.turn
    assert turn is not None
    counted_turn = None
    if turn.chain is None:
        # A normal flick is counted before it resolves (a chain lunge spends a chain credit instead); the
        # resolution makes the counted turn part of its own new state rather than resolve in one more.
        left = turn.flicks_left - 1
        counted_turn = Turn(turn.side, turn.number, left, None, turn.sent, turn.last_stand, True)
    resolve = resolve_snipe if action.kind == "snipe" else resolve_lunge
    state, events = resolve(state, action.soldier, action.vector, counted_turn=counted_turn)
    state, more = finish_flick(state)
    return state, events + more


def check_flick(state: State, side: Side, action: Flick) -> None:
    """Refuses a `flick` the rules forbid now (the checks `flick` makes before it resolves)."""
    _check_soldier(state, side, action.soldier)
    length = math.hypot(*action.vector)
    if length < 1.0:
        raise IllegalAction("vector_too_short", f"flick: the pull {length:g} is shorter than 1 unit")
    _check_chain(state, action.soldier, action.kind)


def check_flicker(state: State, side: Side, soldier_id: str, kind: str) -> None:
    """Refuses a flick of this kind by this soldier now, whatever its pull: out of play or turn, not the
    side's soldier, crossed out, on the road, or not the lunge a pending chain owes.

    >>> from dotfight.engine import RuleSet, apply, new_page
    >>> page = new_page(RuleSet.preset("quick"), seed=7)
    >>> for side, kind in [("blue", "quick_setup"), ("blue", "ready"), ("red", "ready")]:
    ...     page, _ = apply(page, side, {"type": kind})
    >>> check_flicker(page, "blue", "b1s1", "snipe")
    >>> check_flicker(page, "red", "b2s1", "snipe")
    Traceback (most recent call last):
    ...
    dotfight.engine.errors.IllegalAction: flick: it is blue's move, not red's
    """
    _check_soldier(state, side, soldier_id)
    _check_chain(state, soldier_id, kind)


def _check_soldier(state: State, side: Side, soldier_id: str) -> None:
    require_phase(state, "play", "flick")
    require_actor(state, side, "flick")
    require_standing(state, side, soldier_id, "flick", "is on the road and cannot be flicked")


def chain_allows(state: State, soldier_id: str, kind: str) -> bool:
    """Tells whether a pending chain lets this soldier flick this kind now: with no chain pending any
    flick may be made; with one, only its lunger's lunge.

    >>> from dotfight.engine import RuleSet, apply, new_page
    >>> page = new_page(RuleSet.preset("quick"), seed=7)
    >>> for side, kind in [("blue", "quick_setup"), ("blue", "ready"), ("red", "ready")]:
    ...     page, _ = apply(page, side, {"type": kind})
    >>> chain_allows(page, "b1s1", "snipe")
    True
    """
    chain = state.turn.chain if state.turn is not None else None
    return chain is None or (soldier_id == chain.soldier and kind == "lunge")


def _check_chain(state: State, soldier_id: str, kind: str) -> None:
    if not chain_allows(state, soldier_id, kind):
        chain = state.turn.chain if state.turn is not None else None
        assert chain is not None
        raise IllegalAction(
            "chain_pending",
            f"flick: {chain.soldier} owes his lunge-again; lunge with him or stop the chain",
        )
