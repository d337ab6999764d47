"""The free send (RULES.md §7): soldiers walk on the road to another base and arrive next turn."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import replace

from .actions import Send
from .errors import IllegalAction
from .guards import require_actor, require_phase, require_standing, standing
from .jotting import jot
from .rules import MAX_BASES_PER_SIDE, MAX_SOLDIERS_PER_BASE
from .state import State, evolve, evolve_soldiers
from .values import Base, Convoy, Cross, Event, Side, Soldier, other_side
from .winning import end_page, game_over_event


def send(state: State, side: Side, action: Send) -> tuple[State, list[Event]]:
    """Puts 1 to `send_max` soldiers from one own base on the road to another; once a turn."""
    check_send(state, side, action)
    turn = state.turn
    assert turn is not None
    source, to = state.base(action.source), state.base(action.to)
    places = road_places(source, to, len(action.soldiers), state.rules.dot_radius)
    updates: dict[int, Soldier] = {}
    walked: list[dict[str, object]] = []
    for soldier_id, (x, y) in zip(action.soldiers, places, strict=True):
        index = state.soldier_index[soldier_id]
        old = state.soldiers[index]
        updates[index] = Soldier(old.id, old.side, x, y, True, True, None)
        walked.append({"id": soldier_id, "x": x, "y": y})
    state = evolve_soldiers(
        state,
        updates,
        convoys=(*state.convoys, Convoy(side, source.id, to.id, action.soldiers)),
        turn=replace(turn, sent=True),
    )
    return state, [{"type": "send", "side": side, "from": source.id, "to": to.id, "soldiers": walked}]


def check_send(state: State, side: Side, action: Send) -> None:
    """Refuses a `send` the rules forbid now (the checks `send` makes before anyone walks)."""
    require_phase(state, "play", "send")
    require_actor(state, side, "send")
    turn = state.turn
    assert turn is not None
    rules = state.rules
    if turn.sent:
        raise IllegalAction("already_sent", "send: one send a turn, and this turn's send is made")
    count = len(action.soldiers)
    if not 1 <= count <= rules.send_max:
        raise IllegalAction("send_size", f"send: {count} soldiers named; a send moves 1 to {rules.send_max}")
    source, to = state.base(action.source), state.base(action.to)
    for base in (source, to):
        if base.side != side:
            raise IllegalAction("not_your_base", f"send: base {base.id} is {base.side}'s, not {side}'s")
    if source.id == to.id:
        raise IllegalAction("same_base", f"send: from and to are both {source.id}")
    for soldier_id in action.soldiers:
        soldier = require_standing(state, side, soldier_id, "send", "is already on the road")
        if not source.contains(soldier.x, soldier.y):
            raise IllegalAction(
                "not_in_base",
                f"send: {soldier_id} at ({soldier.x:g}, {soldier.y:g}) is not inside {source.id}",
            )
    if turn.chain is not None and turn.chain.soldier in action.soldiers:
        raise IllegalAction(
            "chain_pending", f"send: {turn.chain.soldier} owes his lunge-again and cannot walk"
        )
    if turn.chain is None and turn.flicks_left > 0:
        walking = set(action.soldiers)
        if not any(standing(s, side) and s.id not in walking for s in state.soldiers):
            raise IllegalAction(
                "no_soldier_left", "send: nobody would be left to make the flick this turn owes"
            )


def road_places(source: Base, to: Base, count: int, dot_radius: float) -> list[tuple[float, float]]:
    """Returns the road places: single file on the line between the centres, centred on its midpoint,
    `3 × dot_radius` apart; the first soldier named walks at the head (nearest the destination)."""
    dx, dy = to.x - source.x, to.y - source.y
    length = math.hypot(dx, dy)
    ux, uy = dx / length, dy / length
    mx, my = (source.x + to.x) / 2, (source.y + to.y) / 2
    step = 3 * dot_radius
    places = []
    for i in range(count):
        offset = ((count - 1) / 2 - i) * step
        places.append((mx + ux * offset, my + uy * offset))
    return places


def arrive(state: State, side: Side) -> tuple[State, list[Event]]:
    """At the start of the side's turn its convoy's survivors arrive at free spots in the destination;
    an enemy soldier standing in that ring is shot (cause "shot", by "garrison")."""
    mine = [c for c in state.convoys if c.side == side]
    if not mine:
        return state, []
    events: list[Event] = []
    state = evolve(state, convoys=tuple(c for c in state.convoys if c.side != side))
    for convoy in mine:
        destination = state.base(convoy.to)
        survivors = [s for s in map(state.soldier, convoy.soldiers) if s.alive]
        if not survivors:
            continue
        taken = [(s.x, s.y) for s in state.soldiers if s.alive and not s.on_road]
        updates: dict[int, Soldier] = {}
        placed: list[dict[str, object]] = []
        for soldier in survivors:
            x, y = free_spot(destination, taken, state.rules.dot_radius, state.rules.soldiers_per_base)
            taken.append((x, y))
            updates[state.soldier_index[soldier.id]] = Soldier(
                soldier.id, soldier.side, x, y, True, False, None
            )
            placed.append({"id": soldier.id, "x": x, "y": y})
        state = evolve_soldiers(state, updates)
        events.append({"type": "arrived", "side": side, "to": destination.id, "soldiers": placed})
        state, shot_events = _shoot_intruders(state, destination)
        events.extend(shot_events)
    return state, events


def _shoot_intruders(state: State, base: Base) -> tuple[State, list[Event]]:
    """Crosses out every enemy soldier standing in the ring the convoy just manned."""
    events: list[Event] = []
    enemy = other_side(base.side)
    for index, soldier in enumerate(state.soldiers):
        if (
            soldier.alive
            and not soldier.on_road
            and soldier.side == enemy
            and base.contains(soldier.x, soldier.y)
        ):
            dead = Soldier(
                soldier.id,
                soldier.side,
                soldier.x,
                soldier.y,
                False,
                False,
                Cross("garrison", "shot", base.side),
            )
            state = evolve_soldiers(state, {index: dead})
            events.append(
                {
                    "type": "crossed_out",
                    "soldier": soldier.id,
                    "at": [soldier.x, soldier.y],
                    "by": "garrison",
                    "cause": "shot",
                }
            )
            if state.phase != "over" and not state.living(enemy):
                state = end_page(state, base.side, "all_crossed_out")
                events.append(game_over_event(base.side, "all_crossed_out"))
    return state, events


def free_spot(
    base: Base, taken: list[tuple[float, float]], dot_radius: float, capacity: int
) -> tuple[float, float]:
    """Returns the first free spot in the ring: the base's own jotting spots first, then a fine hex grid
    inside the wall, nearest the centre first; if none is free, the spot with the most clearance (a
    crowded ring still takes him). See `free_spot_search` for why the work is bounded."""
    return free_spot_search(base, taken, dot_radius, capacity)[0]


# Each dot blocks at most 4 points of a hex grid whose spacing is a hair over its diameter (no open disc
# of radius 2·dot_radius holds more), so among the first MAX_SPOTS_TRIED candidates — a full base's
# jotting spots, 4 per dot that can stand on the page, and one more — one is free, or the grid has run
# out. The bound holds for every rule set `RuleSet` accepts (at most 2 × 8 × 20 soldiers).
MAX_SOLDIERS_ON_PAGE = 2 * MAX_BASES_PER_SIDE * MAX_SOLDIERS_PER_BASE
MAX_SPOTS_TRIED = MAX_SOLDIERS_PER_BASE + 4 * MAX_SOLDIERS_ON_PAGE + 1


def free_spot_search(
    base: Base, taken: list[tuple[float, float]], dot_radius: float, capacity: int
) -> tuple[tuple[float, float], int]:
    """Returns `free_spot`'s answer and how many candidate spots it tried (at most MAX_SPOTS_TRIED,
    whatever the ratio of base to dot: the grid is walked outwards lazily, never built whole).

    >>> from dotfight.engine import Base
    >>> ring = Base("b1", "blue", 500.0, 1100.0, 80.0, 8)
    >>> spot, tried = free_spot_search(ring, [(500.0, 1100.0)], 0.001, 8)
    >>> [round(v, 3) for v in spot], tried  # the centre jotting spot is taken, the next one is free
    ([500.0, 1020.002], 2)
    """
    need = (2 * dot_radius) ** 2
    # Every candidate lies within r − dot_radius of the centre, so a dot farther than r + 3·dot_radius is
    # more than two dot radii from all of them: it never blocks one nor is any blocked one's nearest.
    reach = (base.r + 3 * dot_radius) ** 2
    taken = [(tx, ty) for tx, ty in taken if (tx - base.x) ** 2 + (ty - base.y) ** 2 <= reach]
    best: tuple[float, float] = (base.x, base.y)
    best_clearance = -1.0
    tried = 0
    spots = jot(base.x, base.y, base.r, capacity, dot_radius, flip=base.side == "red")
    for x, y in itertools.chain(spots, _grid_outwards(base, dot_radius)):
        tried += 1
        clearance = min(((x - tx) ** 2 + (y - ty) ** 2 for tx, ty in taken), default=math.inf)
        if clearance >= need:
            return (x, y), tried
        if clearance > best_clearance:
            best, best_clearance = (x, y), clearance
        if tried >= MAX_SPOTS_TRIED:
            break  # never reached: a safety net for the bound above
    return best, tried


def _grid_outwards(base: Base, dot_radius: float) -> Iterator[tuple[float, float]]:
    """Yields the hex grid's points inside the ring (centre at most `r − dot_radius` from the base's),
    in order of (distance from the centre, angle), one band of distances at a time.

    The points and their order are exactly those of sorting the whole grid at once (the free-spot search
    of every stored page), but each band costs only about the points in it."""
    step = 2 * dot_radius * (1 + 1e-9)
    row_height = step * math.sqrt(3) / 2
    limit = base.r - dot_radius
    band = 0
    while band * step <= limit:
        low, high = band * step, (band + 1) * step
        points: list[tuple[float, float, float, float]] = []
        reach = int(high / row_height) + 1
        for row in range(-reach, reach + 1):
            gy = row * step * math.sqrt(3) / 2  # the very expression the whole grid used, for equal floats
            shift = step / 2 if row % 2 else 0.0
            if abs(gy) >= high + step:
                continue
            outer = math.sqrt(max(high * high - gy * gy, 0.0))
            inner = math.sqrt(max(low * low - gy * gy, 0.0))
            for first, last in _column_spans(inner, outer, shift, step):
                for col in range(first, last + 1):
                    gx = col * step + shift
                    distance = math.hypot(gx, gy)
                    if low <= distance < high and distance <= limit:
                        points.append((distance, math.atan2(gy, gx), base.x + gx, base.y + gy))
        points.sort()
        for _, _, x, y in points:
            yield x, y
        band += 1


def _column_spans(inner: float, outer: float, shift: float, step: float) -> list[tuple[int, int]]:
    """The grid columns whose x may lie in inner ≤ |x| ≤ outer (with a column of slack each way)."""
    left = (math.floor((-outer - shift) / step) - 1, math.ceil((-inner - shift) / step) + 1)
    right = (math.floor((inner - shift) / step) - 1, math.ceil((outer - shift) / step) + 1)
    if left[1] >= right[0]:
        return [(left[0], right[1])]
    return [left, right]
