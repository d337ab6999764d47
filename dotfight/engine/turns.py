"""Turn bookkeeping (RULES.md §3, §9): the start of a turn, the end of a flick, stop, resign."""

from __future__ import annotations

from .errors import GAME_OVER, IllegalAction
from .flick import flicks_granted, in_last_stand
from .guards import require_actor, require_phase
from .send import arrive
from .state import State, evolve
from .values import Event, Side, Turn, other_side
from .winning import end_page, game_over_event, phase_over_event


def start_turn(state: State, side: Side) -> tuple[State, list[Event]]:
    """Starts the side's turn: its convoy arrives, last stand is decided, and the turn is announced."""
    state, events = arrive(state, side)
    if state.phase == "over":
        events.append(phase_over_event())
        return state, events
    rules = state.rules
    last_stand = in_last_stand(rules, state.roster.living(side))
    flicks = flicks_granted(rules, last_stand)
    number = 1 if state.turn is None else state.turn.number + 1
    state = evolve(state, turn=Turn(side=side, number=number, flicks_left=flicks, last_stand=last_stand))
    events.append(
        {"type": "turn", "side": side, "flicks": flicks, "last_stand": last_stand, "number": number}
    )
    return state, events


def finish_flick(state: State) -> tuple[State, list[Event]]:
    """After a resolved flick or stop: passes the turn once no flick is left and no chain is pending,
    or when flicks are left but nobody can make them (the rest walk on the road)."""
    if not turn_is_spent(state):
        return state, []
    assert state.turn is not None
    return start_turn(state, other_side(state.turn.side))


def turn_is_spent(state: State) -> bool:
    """Tells whether the turn in play is over: no chain pending, and no flick left or nobody to make it.

    >>> from dotfight.engine import RuleSet, apply, new_page
    >>> page = new_page(RuleSet.preset("quick"), seed=7)
    >>> for side, kind in [("blue", "quick_setup"), ("blue", "ready"), ("red", "ready")]:
    ...     page, _ = apply(page, side, {"type": kind})
    >>> turn_is_spent(page), page.turn.flicks_left
    (False, 1)
    """
    turn = state.turn
    if turn is None or turn.chain is not None:
        return False
    return _no_flick_left(state, turn.side, turn.flicks_left)


def _no_flick_left(state: State, side: Side, flicks_left: int) -> bool:
    """Whether a turn of `side` in play with no chain pending and `flicks_left` flicks is over: none is
    left, or nobody stands to make them (the stop's question too, asked without making its turn)."""
    return state.phase == "play" and (flicks_left <= 0 or not state.roster.anyone_standing(side))


def stop(state: State, side: Side) -> tuple[State, list[Event]]:
    """`stop`: drops a pending chain (the turn goes on if flicks are left), or ends the turn."""
    check_stop(state, side)
    stopped = _stopped(state)
    if state.turn is not None and state.turn.chain is not None:
        events: list[Event] = [{"type": "bonus", "reason": "lunge_again", "credits": 0}]
        stopped, more = finish_flick(stopped)
        return stopped, events + more
    return finish_flick(stopped)


def check_stop(state: State, side: Side) -> None:
    """Refuses a `stop` the rules forbid now: out of play or turn, or before the turn's first flick."""
    require_phase(state, "play", "stop")
    require_actor(state, side, "stop")
    turn = state.turn
    assert turn is not None
    if not stop_allowed(turn):
        raise IllegalAction("stop_before_flick", "stop: a turn can only be ended early after its first flick")


def stop_allowed(turn: Turn) -> bool:
    """Tells whether the turn in play lets its side stop now (`check_stop`'s own rule, once the phase and
    the actor are right): a pending chain may always be dropped, a turn ended once it has flicked.

    >>> stop_allowed(Turn("blue", 1, 1)), stop_allowed(Turn("blue", 1, 0, flicked=True))
    (False, True)
    """
    return turn.chain is not None or turn.flicked


def stop_ends_turn(state: State) -> bool:
    """Tells whether an accepted `stop` now would pass the turn (not only drop a pending chain).

    >>> from dotfight.engine import RuleSet, apply, new_page
    >>> page = new_page(RuleSet.preset("quick"), seed=7)
    >>> for side, kind in [("blue", "quick_setup"), ("blue", "ready"), ("red", "ready")]:
    ...     page, _ = apply(page, side, {"type": kind})
    >>> stop_ends_turn(page)  # a stop before the first flick is refused, but would end the turn
    True
    """
    turn = state.turn
    if turn is None:
        return False
    # The turn a stop leaves (`_stopped_turn`) has no chain, and the flicks left only when it dropped one.
    return _no_flick_left(state, turn.side, turn.flicks_left if turn.chain is not None else 0)


def _stopped(state: State) -> State:
    """The state a stop leaves before the turn is passed: the chain dropped, or no flick left."""
    return evolve(state, turn=_stopped_turn(state))


def _stopped_turn(state: State) -> Turn:
    """The turn a stop leaves: the chain dropped, or no flick left."""
    turn = state.turn
    assert turn is not None
    # The Turn built field by field: `dataclasses.replace` costs several times more on this hot path.
    flicks_left = turn.flicks_left if turn.chain is not None else 0
    return Turn(turn.side, turn.number, flicks_left, None, turn.sent, turn.last_stand, turn.flicked)


def check_resign(state: State, side: Side) -> None:
    """Refuses a `resign` (or a `time_out`, an `abandon`) once the page is over; any seat may resign at
    any other moment."""
    if state.phase == "over":
        raise IllegalAction("game_over", "the page is already over; there is nothing to resign", GAME_OVER)


def resign(state: State, side: Side, reason: str = "resigned") -> tuple[State, list[Event]]:
    """`resign`: the page ends for the other side, at any moment, in or out of turn. `time_out` and
    `abandon` end it the same way, with their own `reason` ("time", "abandoned")."""
    check_resign(state, side)
    winner = other_side(side)
    return end_page(state, winner, reason), [game_over_event(winner, reason), phase_over_event()]
