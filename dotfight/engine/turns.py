"""Turn bookkeeping (RULES.md §3, §9): the start of a turn, the end of a flick, stop, resign."""

from __future__ import annotations

from dataclasses import replace

from .errors import GAME_OVER, IllegalAction
from .flick import in_last_stand
from .guards import require_actor, require_phase
from .send import arrive
from .state import Event, Side, State, Turn, evolve, other_side
from .winning import end_page, game_over_event, phase_over_event


def start_turn(state: State, side: Side) -> tuple[State, list[Event]]:
    """Starts the side's turn: its convoy arrives, last stand is decided, and the turn is announced."""
    state, events = arrive(state, side)
    if state.phase == "over":
        events.append(phase_over_event())
        return state, events
    rules = state.rules
    last_stand = in_last_stand(rules, len(state.living(side)))
    flicks = rules.last_stand_flicks if last_stand else 1
    number = 1 if state.turn is None else state.turn.number + 1
    state = evolve(state, turn=Turn(side=side, number=number, flicks_left=flicks, last_stand=last_stand))
    events.append(
        {"type": "turn", "side": side, "flicks": flicks, "last_stand": last_stand, "number": number}
    )
    return state, events


def finish_flick(state: State) -> tuple[State, list[Event]]:
    """After a resolved flick or stop: passes the turn once no flick is left and no chain is pending,
    or when flicks are left but nobody can make them (the rest walk on the road)."""
    turn = state.turn
    if state.phase != "play" or turn is None or turn.chain is not None:
        return state, []
    if turn.flicks_left > 0 and any(
        s.alive and not s.on_road and s.side == turn.side for s in state.soldiers
    ):
        return state, []
    return start_turn(state, other_side(turn.side))


def stop(state: State, side: Side) -> tuple[State, list[Event]]:
    """`stop`: drops a pending chain (the turn goes on if flicks are left), or ends the turn."""
    require_phase(state, "play", "stop")
    require_actor(state, side, "stop")
    turn = state.turn
    assert turn is not None
    if turn.chain is not None:
        state = evolve(state, turn=replace(turn, chain=None))
        events: list[Event] = [{"type": "bonus", "reason": "lunge_again", "credits": 0}]
        state, more = finish_flick(state)
        return state, events + more
    if not turn.flicked:
        raise IllegalAction("stop_before_flick", "stop: a turn can only be ended early after its first flick")
    return finish_flick(evolve(state, turn=replace(turn, flicks_left=0)))


def resign(state: State, side: Side) -> tuple[State, list[Event]]:
    """`resign`: the page ends for the other side, at any moment, in or out of turn."""
    if state.phase == "over":
        raise IllegalAction("game_over", "the page is already over; there is nothing to resign", GAME_OVER)
    winner = other_side(side)
    return end_page(state, winner, "resigned"), [game_over_event(winner, "resigned"), phase_over_event()]
