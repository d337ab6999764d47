"""Rule questions answered without resolving a flick or drawing dice: why an action would be refused,
whether an accepted one would change nothing, where a soldier may stand, who may flick, what may be
sent, and what the turn in play allows.

Every answer comes from the same checks `apply` makes (`reducer.check_action` and the checks it calls),
so the bot, the lab, the server and the browser (through the server) never re-derive a rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .actions import parse_action, parse_side
from .errors import EngineError, IllegalAction
from .flick import flicks_granted, steadiness
from .guards import require_actor, require_phase, standing
from .reducer import chain_allows, check_action
from .setup import first_overlaps, stand_refusal
from .state import State
from .turns import stop_allowed, stop_ends_turn
from .values import Side, Soldier


def refusal(state: State, side: object, action: object) -> EngineError | None:
    """Returns exactly the error `apply(state, side, action)` would raise, or None when it would accept
    the action; nothing is resolved and nothing is drawn from the page's generator.

    >>> from dotfight.engine import RuleSet, new_page, refusal
    >>> page = new_page(RuleSet.preset("quick"), seed=7)
    >>> refusal(page, "blue", {"type": "quick_setup"}) is None
    True
    >>> error = refusal(page, "red", {"type": "quick_setup"})
    >>> error.code, error.reason
    ('not_your_turn', 'not_your_turn')
    >>> refusal(page, "blue", {"type": "jump"}).reason
    'unknown_action'
    """
    try:
        check_action(state, parse_side(side), parse_action(state, action))
    except EngineError as error:
        return error
    return None


def changes_nothing(state: State, action: dict[str, Any]) -> bool:
    """Tells whether an action `apply` accepts on `state` would only add a version: a `position` that
    moves nobody (an empty list, or every soldier to where he already stands). The server refuses such
    actions when they arrive (reason `no_change`); ones already in a log still replay. Asked of an
    action `apply` accepted: an unknown soldier is not "nothing" (apply refuses him anyway).

    >>> from dotfight.engine import RuleSet, apply, changes_nothing, new_page
    >>> page, _ = apply(new_page(RuleSet.preset("quick"), seed=7), "blue", {"type": "quick_setup"})
    >>> changes_nothing(page, {"type": "position", "soldiers": []})
    True
    >>> changes_nothing(page, {"type": "position", "soldiers": [{"id": "b3s1", "x": 500, "y": 1050}]})
    True
    >>> changes_nothing(page, {"type": "position", "soldiers": [{"id": "b3s1", "x": 501, "y": 1050}]})
    False
    >>> changes_nothing(page, {"type": "ready"})
    False
    """
    if action.get("type") != "position":
        return False
    index = state.soldier_index
    soldiers = state.soldiers
    for item in action["soldiers"]:
        at = index.get(item["id"])
        if at is None or (soldiers[at].x, soldiers[at].y) != (item["x"], item["y"]):
            return False
    return True


def placement_problem(state: State, side: Side, soldier_id: str, x: float, y: float) -> str | None:
    """Returns the engine's reason soldier `soldier_id` of `side` may not stand at (x, y), everyone else
    where they are — "outside_own_bases", "off_page", "overlapping", "not_your_soldier" or
    "unknown_soldier" — or None when a `position` moving only him there passes the placement rules.

    >>> from dotfight.engine import RuleSet, apply, new_page, placement_problem
    >>> page, _ = apply(new_page(RuleSet.preset("quick"), seed=7), "blue", {"type": "quick_setup"})
    >>> page.base("b3")  # blue's centre base: radius 70, outside margin 20
    Base(id='b3', side='blue', x=500.0, y=1050.0, r=70.0, capacity=8)
    >>> placement_problem(page, "blue", "b3s1", 500.0, 1135.0)  # 85 from the centre: just outside
    >>> placement_problem(page, "blue", "b3s1", 500.0, 1145.0)
    'outside_own_bases'
    >>> placement_problem(page, "blue", "b3s1", page.soldier("b3s2").x + 5, page.soldier("b3s2").y)
    'overlapping'
    """
    index = state.soldier_index.get(soldier_id)
    if index is None:
        return "unknown_soldier"
    old = state.soldiers[index]
    if old.side != side:
        return "not_your_soldier"
    soldiers = list(state.soldiers)
    soldiers[index] = Soldier(old.id, old.side, x, y)
    overlapped = first_overlaps(soldiers, [index], 2 * state.rules.dot_radius).get(index)
    problem = stand_refusal(state.rules, state.bases_of(side), soldiers, index, overlapped)
    return None if problem is None else problem.reason


def can_stand(state: State, side: Side, soldier_id: str, x: float, y: float) -> bool:
    """Tells whether `placement_problem` finds nothing wrong with the spot.

    >>> from dotfight.engine import RuleSet, apply, can_stand, new_page
    >>> page, _ = apply(new_page(RuleSet.preset("quick"), seed=7), "blue", {"type": "quick_setup"})
    >>> can_stand(page, "blue", "b3s1", 500.0, 1135.0), can_stand(page, "blue", "b3s1", 500.0, 700.0)
    (True, False)
    """
    return placement_problem(state, side, soldier_id, x, y) is None


def flickable(state: State, side: Side) -> list[str]:
    """Returns the ids of the side's soldiers `apply` would let flick now (with a pull of at least one
    unit, of a kind a pending chain allows); empty when it is not the side's turn in play.

    The turn's part of `check_flicker` (phase, actor) is asked once; each soldier is then held to the
    soldier's part of it (`standing`, `chain_allows`), not made to raise one refusal per soldier.

    >>> from dotfight.engine import RuleSet, apply, flickable, new_page
    >>> page = new_page(RuleSet.preset("quick"), seed=7)
    >>> for side, kind in [("blue", "quick_setup"), ("blue", "ready"), ("red", "ready")]:
    ...     page, _ = apply(page, side, {"type": kind})
    >>> flickable(page, "blue")[:3], len(flickable(page, "blue")), flickable(page, "red")
    (['b1s1', 'b1s2', 'b1s3'], 24, [])
    """
    try:
        require_phase(state, "play", "flick")
        require_actor(state, side, "flick")
    except IllegalAction:
        return []
    chain = state.turn.chain if state.turn is not None else None
    if chain is not None:
        # Only the chain's lunger may flick (a lunge), and only while he stands.
        index = state.soldier_index.get(chain.soldier)
        if index is None or not standing(state.soldiers[index], side):
            return []
        return [chain.soldier] if chain_allows(state, chain.soldier, "lunge") else []
    # Everyone `standing` accepts: the roster the state keeps (asked once per soldiers, not per call).
    # Unpacked, not list(): a list built from the interpreter's free list does not add to the young
    # generation's count (the collector runs less often).
    return [*state.roster.standing(side)]


def send_options(state: State, side: Side) -> dict[str, Any]:
    """Returns what the side may send now: `{"max": n, "from": {base: [bases it may walk to]},
    "men": {base: [soldiers inside who may walk]}}`, where `from` lists each own base with men inside who
    may walk, and any 1 to `max` of a base's `men` (as many as it holds) may go; `{"max": 0, "from": {},
    "men": {}}` when no send is possible now. (The browser picks the walkers from `men`: who stands inside
    a base is the engine's question, not the client's.)

    The answer is `check_send`'s, worked out once for the whole turn rather than by trying every route
    and size: its turn-wide refusals (phase, actor, `already_sent`, a `send_max` below one) close every
    route; a route needs another own base; a man may walk when he stands inside the base (the page's
    `arrays`, the same sums as `Base.contains`) and is not the chain's lunger; and with flicks owed and
    no chain, a send must leave one standing soldier behind. (tests/engine/test_query.py holds it to
    `check_send` on every route and size, and to the answer of trying them all.)

    >>> from dotfight.engine import RuleSet, apply, new_page, send_options
    >>> page = new_page(RuleSet.preset("quick"), seed=7)
    >>> for side, kind in [("blue", "quick_setup"), ("blue", "ready"), ("red", "ready")]:
    ...     page, _ = apply(page, side, {"type": kind})
    >>> options = send_options(page, "blue")
    >>> options["max"], options["from"]
    (5, {'b1': ['b3', 'b5'], 'b3': ['b1', 'b5'], 'b5': ['b1', 'b3']})
    >>> options["men"]["b3"]
    ['b3s1', 'b3s2', 'b3s3', 'b3s4', 'b3s5', 'b3s6', 'b3s7', 'b3s8']
    >>> send_options(page, "red")
    {'max': 0, 'from': {}, 'men': {}}
    """
    none: dict[str, Any] = {"max": 0, "from": {}, "men": {}}
    try:
        require_phase(state, "play", "send")
        require_actor(state, side, "send")
    except IllegalAction:
        return none
    turn = state.turn
    assert turn is not None
    send_max = state.rules.send_max
    walls = state.base_arrays
    own = walls.own[side]
    if turn.sent or send_max < 1 or len(own) < 2:
        return none  # already sent, no send size allowed, or nowhere else to walk to
    chain = turn.chain
    lunger = chain.soldier if chain is not None else None
    # Who stands in which own base: the holders of each wall (`home` is the first wall enclosing each
    # soldier, as `base_at` finds, and `counted` that he holds it: standing, and the wall is his
    # side's), kept with the views while the soldiers stay.
    men = state.arrays.men_holding()
    holders = sum(len(men[i]) for i in own)
    must_leave_one = chain is None and turn.flicks_left > 0
    # Standing men outside the walls count too, but only where a send might take all but one of them.
    standing_men = holders
    if must_leave_one and holders <= send_max:
        standing_men = len(state.roster.standing(side))
        if standing_men < 2:
            return none  # whoever walked, nobody would be left to make the flick this turn owes
    bases = state.bases
    routes: dict[str, list[str]] = {}
    may_walk: dict[str, list[str]] = {}
    most = 0
    for i in own:
        inside = men[i]
        # (No lunger is the usual case: asked first, it spares a scan of the men inside.)
        walkers = [*inside] if lunger is None or lunger not in inside else [m for m in inside if m != lunger]
        if not walkers:
            continue
        source = bases[i].id
        routes[source] = [*walls.routes[i]]
        may_walk[source] = walkers
        # The largest send from here: the lunger (if inside) would be named last and may not walk, and
        # with flicks owed one standing man stays behind.
        largest = min(send_max, len(walkers))
        if must_leave_one:
            largest = max(1, min(largest, standing_men - 1))
        most = max(most, largest)
    if not routes:
        return none
    return {"max": most, "from": routes, "men": may_walk}


def turn_options(state: State) -> dict[str, Any] | None:
    """Returns what the side in play may do now, JSON-able (CONTRACTS.md C1); None outside play.

    `bonus` tells that a bonus flick (two with one bullet) is pending: more flicks are left than the
    turn's own allotment still holds after a flick. `can_stop`: a `stop` is accepted now;
    `can_end_turn`: that stop would also pass the turn. `send` is `send_options`, or None when no send is
    possible now.

    >>> from dotfight.engine import RuleSet, apply, new_page, turn_options
    >>> page = new_page(RuleSet.preset("quick"), seed=7)
    >>> for side, kind in [("blue", "quick_setup"), ("blue", "ready"), ("red", "ready")]:
    ...     page, _ = apply(page, side, {"type": kind})
    >>> options = turn_options(page)
    >>> {key: options[key] for key in ("side", "flicks_left", "kinds", "chain", "can_stop", "bonus")}
    {'side': 'blue', 'flicks_left': 1, 'kinds': ['snipe', 'lunge'], 'chain': None, 'can_stop': False,
     'bonus': False}
    >>> options["send"]["max"], len(options["flickable"])
    (5, 24)
    """
    turn = state.turn
    if state.phase != "play" or turn is None:
        return None
    side = turn.side
    allotment = flicks_granted(state.rules, turn.last_stand)
    can_stop = stop_allowed(turn)  # in play and the turn's side: `check_stop` asks only this further
    send = send_options(state, side)
    return {
        "side": side,
        "flicks_left": turn.flicks_left,
        "flickable": flickable(state, side),
        "kinds": ["lunge"] if turn.chain is not None else ["snipe", "lunge"],
        "chain": None if turn.chain is None else turn.chain.to_json(),
        "steadiness": steadiness(state),
        "last_stand": turn.last_stand,
        "bonus": turn.flicked and turn.flicks_left >= allotment,
        "can_stop": can_stop,
        "can_end_turn": can_stop and stop_ends_turn(state),
        "send": send if send["max"] > 0 else None,
    }


def with_cross_sides(state: State, events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Returns the events with every `crossed_out` naming `side`, the colour of its cross: the crossed
    soldier's `Cross.side` in `state`, looked up, not worked out. `state` may be any state at or after
    the events (nobody is ever uncrossed), so a log read long after keeps its crosses' colours. The
    events given are not changed; one already naming its side, or whose soldier `state` does not hold
    crossed, is passed on as it is.

    >>> from dotfight.engine import RuleSet, apply, new_page
    >>> page = new_page(RuleSet.preset("quick"), seed=7)
    >>> for side, kind in [("blue", "quick_setup"), ("blue", "ready"), ("red", "ready")]:
    ...     page, _ = apply(page, side, {"type": kind})
    >>> flick = {"type": "flick", "soldier": "b3s1", "kind": "snipe", "vector": [0, -900]}
    >>> page, events = apply(page, "blue", flick)
    >>> crosses = [e for e in with_cross_sides(page, events) if e["type"] == "crossed_out"]
    >>> [(e["soldier"], e["side"]) for e in crosses][:1]
    [('b4s5', 'blue')]
    >>> any("side" in e for e in events if e["type"] == "crossed_out")  # the engine's own unchanged
    False
    """
    return [
        _with_cross_side(state, event) if event.get("type") == "crossed_out" else event for event in events
    ]


def _with_cross_side(state: State, event: dict[str, Any]) -> dict[str, Any]:
    if "side" in event:
        return event
    index = state.soldier_index.get(event.get("soldier"))  # type: ignore[arg-type]
    cross = None if index is None else state.soldiers[index].cross
    return event if cross is None else {**event, "side": cross.side}
