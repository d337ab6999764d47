"""The lunge (RULES.md §6): the soldier runs the full length of his ink, shaken at walls and men.

Draws from the page's generator, in this order: the launch angle's `z`, then one `z` per wall or man
event in order along the run (the free wall at his back included, whose spread is 0), so the number
of draws depends only on what the run crosses, never on the spreads' values.
"""

from __future__ import annotations

import math

from .flick import fullness, link_shake, man_shake, power, reach, steadiness, wall_shake, wild_spread
from .geometry import START_EPS, edge_distance
from .rng import normal
from .state import State, evolve_soldiers
from .struck import strike
from .values import Chain, Cross, Event, Ink, Soldier, Turn, other_side
from .winning import end_page, game_over_event, phase_over_event, wiped_out

_WALL, _MAN = 0, 1  # at equal distance the wall is met before the man behind it
# A run bends at every event; this many events in one run is far beyond any real page and only guards
# against a pathological bounce along a wall repeating forever.
MAX_EVENTS_PER_RUN = 10_000


def resolve_lunge(
    state: State, soldier_id: str, vector: tuple[float, float], *, counted_turn: Turn | None = None
) -> tuple[State, list[Event]]:
    """Resolves a legal lunge by `soldier_id` along `vector`: returns the new state and its events
    (ink, walls and crosses in order along the run, the landing, then `game_over`/`phase` or `bonus`).

    When the turn has a chain pending for this soldier, this is link `chain.link`: its launch spread
    grows by `lunge_link_shake × link` and it spends one chain credit. The caller has checked legality
    and counted a normal flick: in the state's turn, or in `counted_turn` as `resolve_snipe` takes it.
    This is the hot path the benchmark times.

    A third-power lunge up out of blue's centre base, landing in no man's land:

    >>> from dotfight.engine import RuleSet, apply, new_page, resolve_lunge
    >>> page = new_page(RuleSet.preset("quick", wildness=0), seed=7)  # launches go exactly where aimed
    >>> for side, kind in [("blue", "quick_setup"), ("blue", "ready"), ("red", "ready")]:
    ...     page, _ = apply(page, side, {"type": kind})
    >>> after, events = resolve_lunge(page, "b3s1", (0, -100))
    >>> [event["type"] for event in events], [round(v, 1) for v in events[-1]["at"]]
    (['ink', 'wall', 'landed'], [500.0, 553.0])
    >>> after.rng - page.rng  # the launch, then the free wall at his back
    2
    """
    rules = state.rules
    index = state.soldier_index[soldier_id]
    runner = state.soldiers[index]
    side = runner.side
    enemy = other_side(side)
    turn = state.turn if counted_turn is None else counted_turn
    chain = turn.chain if turn is not None else None
    if chain is not None and chain.soldier != soldier_id:
        chain = None  # only the chain's own lunger spends its credits
    link = chain.link if chain is not None else 0
    steady = steadiness(state)  # counting a flick leaves its last stand as it was
    seed, draw = state.seed, state.rng

    dx, dy = vector
    t = power(rules, dx, dy)
    length = reach(rules, t)
    sigma = (wild_spread(rules, t) + link_shake(rules, link)) * steady
    angle = math.atan2(dy, dx) + sigma * normal(seed, draw)
    draw += 1

    arrays = state.arrays
    n_bases = arrays.n_bases
    bases = state.bases
    soldiers = state.soldiers
    home, counted = arrays.home, arrays.counted
    garrison = list(arrays.garrison)
    if counted[index]:
        garrison[home[index]] -= 1  # the lunger holds no wall while he runs
    free_wall = home[index]  # leaving the base he started in costs nothing, the first time
    width, height = rules.page_width, rules.page_height
    shake_man = man_shake(rules)
    enemy_wiped = False
    over = state.phase == "over"

    px, py = runner.x, runner.y
    points: list[tuple[float, float]] = [(px, py)]
    remaining = length
    updates: dict[int, Soldier] = {}
    along: list[Event] = []
    cross = Cross(soldier_id, "lunge", side)
    off_page = False
    for _ in range(MAX_EVENTS_PER_RUN):
        ux, uy = math.cos(angle), math.sin(angle)
        to_edge = edge_distance(px, py, ux, uy, width, height)
        limit = min(remaining, to_edge)
        best: tuple[float, int, int] | None = None
        for i, near, far in arrays.crossings(px, py, ux, uy, side):
            if i < n_bases:
                distance = near if near > START_EPS else far
                if distance <= START_EPS or distance > limit:
                    continue  # the wall he stands on right now is not a new crossing
                key = (distance, _WALL, i)
            else:
                if i - n_bases in updates or near > limit:
                    continue  # crossed out earlier in this run, or beyond it
                key = (near, _MAN, i)
            if best is None or key < best:
                best = key
        if best is None:
            px, py = px + ux * limit, py + uy * limit
            points.append((px, py))
            off_page = to_edge < remaining
            break
        distance, kind, i = best
        px, py = px + ux * distance, py + uy * distance
        remaining -= distance
        points.append((px, py))
        z = normal(seed, draw)
        draw += 1
        at = [px, py]
        if kind == _WALL:
            base = bases[i]
            full = fullness(garrison[i], base.capacity)
            spread = 0.0 if i == free_wall else wall_shake(rules, full) * steady
            if i == free_wall:
                free_wall = -1
            turn_by = spread * z if spread else 0.0  # no "-0.0" on the wire
            along.append({"type": "wall", "base": base.id, "at": at, "fullness": full, "shake": turn_by})
        else:
            along.append(strike(soldiers, i - n_bases, cross, at, updates, arrays, garrison))
            turn_by = shake_man * steady * z
            if not over and wiped_out(soldiers, enemy, updates):
                enemy_wiped = True
                over = True
                along.append(game_over_event(side, "all_crossed_out"))
        angle += turn_by
    kills = len(updates)
    # Where he stops decides: off the page, shot by a manned enemy ring, or standing.
    fate: Cross | None = None
    if off_page:
        fate = Cross(soldier_id, "off_page", side)
        along.append(
            {
                "type": "crossed_out",
                "soldier": soldier_id,
                "at": [px, py],
                "by": soldier_id,
                "cause": "off_page",
            }
        )
    else:
        for i, base in enumerate(bases):
            if base.side == enemy and base.contains(px, py) and garrison[i] > 0:
                fate = Cross("garrison", "shot", enemy)
                along.append(
                    {
                        "type": "crossed_out",
                        "soldier": soldier_id,
                        "at": [px, py],
                        "by": "garrison",
                        "cause": "shot",
                    }
                )
                break
        else:
            along.append({"type": "landed", "soldier": soldier_id, "at": [px, py]})
    alive = fate is None
    updates[index] = Soldier(soldier_id, side, px, py, alive, False, fate)
    if not alive and not over and wiped_out(soldiers, side, updates):
        over = True
        along.append(game_over_event(enemy, "all_crossed_out"))

    ink = Ink(side, "lunge", soldier_id, tuple(points), t, length)
    events: list[Event] = [{"type": "ink", **ink.to_json()}, *along]
    changes: dict[str, object] = {"rng": draw, "ink": (*state.ink, ink)}
    if counted_turn is not None:
        changes["turn"] = counted_turn
    if over and state.phase != "over":
        winner = side if enemy_wiped else enemy
        events.append(phase_over_event())
        return end_page(evolve_soldiers(state, updates, **changes), winner, "all_crossed_out"), events
    if turn is not None:
        credits = (chain.credits - 1 if chain is not None else 0) + (kills if alive else 0)
        new_chain = Chain(soldier_id, credits, link + 1) if alive and credits > 0 else None
        changes["turn"] = Turn(
            turn.side, turn.number, turn.flicks_left, new_chain, turn.sent, turn.last_stand, turn.flicked
        )
        if alive and kills:
            events.append({"type": "bonus", "reason": "lunge_again", "credits": credits})
    return evolve_soldiers(state, updates, **changes), events
