"""The rule questions as first written (engine/query.py before issue 12's cost per move): each answer
found by asking `check_flicker` and `check_send` of every soldier, route and size in turn. Slow, and
plainly the same checks `apply` makes; the engine's faster answers are held to these, field for field.
"""

from __future__ import annotations

from typing import Any

from dotfight.engine import query
from dotfight.engine.actions import Send
from dotfight.engine.errors import IllegalAction
from dotfight.engine.guards import require_actor, require_phase
from dotfight.engine.reducer import check_flicker
from dotfight.engine.send import check_send
from dotfight.engine.state import State
from dotfight.engine.values import Side


def flickable(state: State, side: Side) -> list[str]:
    """The answer as first written (see the module docstring)."""
    try:
        require_phase(state, "play", "flick")
        require_actor(state, side, "flick")
    except IllegalAction:
        return []
    return [s.id for s in state.soldiers if s.side == side and _accepted(state, side, s.id)]


def _accepted(state: State, side: Side, soldier_id: str) -> bool:
    try:
        check_flicker(state, side, soldier_id, "lunge")  # a lunge is allowed whenever any flick is
    except IllegalAction:
        return False
    return True


def send_options(state: State, side: Side) -> dict[str, Any]:
    """The answer as first written (see the module docstring)."""
    none: dict[str, Any] = {"max": 0, "from": {}, "men": {}}
    try:
        require_phase(state, "play", "send")
        require_actor(state, side, "send")
    except IllegalAction:
        return none
    # Who stands in which own base; `check_send` itself then decides every route and the size.
    walkers: dict[str, list[str]] = {base.id: [] for base in state.bases_of(side)}
    for soldier in state.soldiers:
        if soldier.side == side and soldier.alive and not soldier.on_road:
            base = state.base_at(soldier.x, soldier.y)
            if base is not None and base.side == side:
                walkers[base.id].append(soldier.id)
    routes: dict[str, list[str]] = {}
    for source, men in walkers.items():
        for man in men:
            open_to = [to for to in walkers if _send_accepted(state, side, source, to, [man])]
            if open_to:
                routes[source] = open_to
                break  # one man who may walk shows the routes; a chain's lunger may not, the rest may
    if not routes:
        return none
    most = max(_largest_send(state, side, source, routes[source][0], walkers[source]) for source in routes)
    chain = state.turn.chain if state.turn is not None else None
    lunger = chain.soldier if chain is not None else None  # a pending chain's lunger never walks
    may_walk = {source: [man for man in walkers[source] if man != lunger] for source in routes}
    return {"max": most, "from": routes, "men": may_walk}


def _largest_send(state: State, side: Side, source: str, to: str, men: list[str]) -> int:
    """The answer as first written (see the module docstring)."""
    chain = state.turn.chain if state.turn is not None else None
    lunger = chain.soldier if chain is not None else None
    walkers = [man for man in men if man != lunger] + [man for man in men if man == lunger]
    most = min(state.rules.send_max, len(walkers))
    while most > 1 and not _send_accepted(state, side, source, to, walkers[:most]):
        most -= 1
    return most


def _send_accepted(state: State, side: Side, source: str, to: str, soldiers: list[str]) -> bool:
    try:
        check_send(state, side, Send(source, to, tuple(soldiers)))
    except IllegalAction:
        return False
    return True


def turn_options(state: State) -> dict[str, Any] | None:
    """The engine's `turn_options` with its `flickable` and `send` as first written (the rest of it is
    unchanged and held to `apply` by test_turn_options_agree_with_apply)."""
    options = query.turn_options(state)
    if options is None:
        return None
    send = send_options(state, options["side"])
    return {
        **options,
        "flickable": flickable(state, options["side"]),
        "send": send if send["max"] > 0 else None,
    }
