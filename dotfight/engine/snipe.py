"""The snipe (RULES.md §5): a straight line of ink that loses power at walls and men.

Draws exactly one number from the page's generator: the launch angle's `z`.
"""

from __future__ import annotations

import math

from .flick import fullness, man_loss, power, reach, steadiness, wall_loss, wild_spread
from .geometry import START_EPS, edge_distance
from .rng import normal
from .state import State, evolve, evolve_soldiers
from .struck import strike
from .values import Cross, Event, Ink, Soldier, Turn, other_side
from .winning import end_page, game_over_event, phase_over_event, wiped_out

_WALL, _MAN = 0, 1  # at equal distance the wall is met before the man behind it


def resolve_snipe(
    state: State, soldier_id: str, vector: tuple[float, float], *, counted_turn: Turn | None = None
) -> tuple[State, list[Event]]:
    """Resolves a legal snipe by `soldier_id` along `vector`: returns the new state and its events
    (ink, walls and crosses in order of distance, then `game_over`/`phase` or the `bonus`).

    The caller has checked legality and counted the flick: in the state's turn, or in `counted_turn`,
    the turn the flick was counted against when the caller has made no state of it (`reducer.flick`:
    the same result as resolving in `evolve(state, turn=counted_turn)`, one state fewer). This is the
    hot path the benchmark times.

    A full-power snipe straight up from the middle of blue's centre base into red's:

    >>> from dotfight.engine import RuleSet, apply, new_page, resolve_snipe
    >>> page = new_page(RuleSet.preset("quick", wildness=0), seed=7)  # launches go exactly where aimed
    >>> for side, kind in [("blue", "quick_setup"), ("blue", "ready"), ("red", "ready")]:
    ...     page, _ = apply(page, side, {"type": kind})
    >>> after, events = resolve_snipe(page, "b3s1", (0, -300))
    >>> [(event["type"], event.get("base") or event.get("soldier")) for event in events]
    [('ink', 'b3s1'), ('wall', 'b3'), ('wall', 'b4'), ('crossed_out', 'b4s2'), ('crossed_out', 'b4s1'),
     ('wall', 'b4'), ('bonus', None)]
    >>> [round(event["loss"], 3) for event in events if event["type"] == "wall"]  # free at his back
    [0.0, 0.85, 0.645]
    >>> after.soldier("b4s2").cross, after.rng - page.rng, after.version == page.version
    (Cross(by='b3s1', cause='snipe', side='blue'), 1, True)
    """
    rules = state.rules
    index = state.soldier_index[soldier_id]
    shooter = state.soldiers[index]
    side = shooter.side
    dx, dy = vector
    t = power(rules, dx, dy)
    length = reach(rules, t)
    sigma = wild_spread(rules, t) * steadiness(state)  # counting a flick leaves its last stand as it was
    angle = math.atan2(dy, dx) + sigma * normal(state.seed, state.rng)
    ux, uy = math.cos(angle), math.sin(angle)
    px, py = shooter.x, shooter.y
    to_edge = edge_distance(px, py, ux, uy, rules.page_width, rules.page_height)
    limit = min(length, to_edge)

    # Every circle the line meets, walls (where it crosses them) and men (where it enters their dot).
    arrays = state.arrays
    n_bases = arrays.n_bases
    soldiers = state.soldiers
    found: list[tuple[float, int, int]] = []
    for i, near, far in arrays.crossings(px, py, ux, uy, side):
        if i < n_bases:
            for crossing in (near, far):
                if START_EPS < crossing <= limit:
                    found.append((crossing, _WALL, i))
        elif near <= limit:
            found.append((near, _MAN, i))
    found.sort()

    bases = state.bases
    garrison = arrays.garrison  # copied before the first man is struck (his wall loses a holder)
    at_back = arrays.home[index]  # the wall at your back: leaving the base he stands in is free
    enemy = other_side(side)
    over = state.phase == "over"
    remaining = length
    travelled = 0.0
    keep_after_man = 1.0 - man_loss(rules)
    updates: dict[int, Soldier] = {}
    along: list[Event] = []
    cross: Cross | None = None  # made for the first man struck (most snipes strike nobody)
    for distance, kind, i in found:
        step = distance - travelled
        if step > remaining:
            break
        remaining -= step
        travelled = distance
        at = [px + ux * distance, py + uy * distance]
        if kind == _WALL:
            base = bases[i]
            full = fullness(garrison[i], base.capacity)
            loss = 0.0 if i == at_back else wall_loss(rules, full)
            remaining *= 1.0 - loss
            along.append({"type": "wall", "base": base.id, "at": at, "fullness": full, "loss": loss})
        else:
            if cross is None:
                cross = Cross(soldier_id, "snipe", side)
                garrison = list(garrison)
            along.append(strike(soldiers, i - n_bases, cross, at, updates, arrays, garrison))
            remaining *= keep_after_man
            if not over and wiped_out(soldiers, enemy, updates):
                over = True
                along.append(game_over_event(side, "all_crossed_out"))
        if remaining <= 0.0:
            break
    end = min(travelled + remaining, to_edge)
    ink = Ink(side, "snipe", soldier_id, ((px, py), (px + ux * end, py + uy * end)), t, length)
    ink_event: Event = {"type": "ink", **ink.to_json()}
    events = [ink_event, *along]

    changes: dict[str, object] = {"rng": state.rng + 1, "ink": (*state.ink, ink)}
    if counted_turn is not None:
        changes["turn"] = counted_turn
    if over and state.phase != "over":
        result = end_page(evolve_soldiers(state, updates, **changes), side, "all_crossed_out")
        events.append(phase_over_event())
        return result, events
    turn = state.turn if counted_turn is None else counted_turn
    if len(updates) >= 2 and turn is not None:
        changes["turn"] = Turn(
            turn.side, turn.number, turn.flicks_left + 1, turn.chain, turn.sent, turn.last_stand, turn.flicked
        )
        events.append({"type": "bonus", "reason": "two_with_one_bullet", "credits": 1})
    return (evolve_soldiers(state, updates, **changes) if updates else evolve(state, **changes)), events
