"""Setup (RULES.md §2): drawing bases in turn, jotting them, positioning, quick setup, ready."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import shapely

from .actions import DrawBase, Position
from .errors import IllegalAction
from .geometry import Circle
from .guards import require_actor, require_phase
from .interning import shared_tuple, shared_view
from .jotting import jot
from .rules import RuleSet
from .state import State, evolve, replace_soldiers
from .turns import start_turn
from .values import Base, Event, Side, Soldier, side_index

# Up to this many (moved, living) pairs, overlaps are found by a plain scan rather than a tree.
_SCAN_PAIRS = 400


def draw_base(state: State, side: Side, action: DrawBase) -> tuple[State, list[Event]]:
    """Draws one base for the side whose turn it is to draw, jots it full, and opens positioning after
    the last base."""
    check_draw_base(state, side, action)
    state, events = _add_base(state, side, action.x, action.y, action.r)
    return _maybe_open_positioning(state, events)


def check_draw_base(state: State, side: Side, action: DrawBase) -> None:
    """Refuses a `draw_base` the rules forbid now (the checks `draw_base` makes before drawing)."""
    require_phase(state, "bases", "draw_base")
    require_actor(state, side, "draw_base")
    check_placement(state.rules, state.bases, side, action.x, action.y, action.r)


def check_placement(rules: RuleSet, bases: Sequence[Base], side: Side, x: float, y: float, r: float) -> None:
    """Refuses a base that is off the page, outside its owner's half, of a radius outside the limits,
    or closer than `base_gap` to the wall of one of `bases`."""
    if not rules.base_radius_min <= r <= rules.base_radius_max:
        raise IllegalAction(
            "radius_out_of_limits",
            f"draw_base: radius r={r:g} is outside the limits "
            f"{rules.base_radius_min:g}–{rules.base_radius_max:g}",
        )
    shape = Circle(x, y, r)
    if not shape.within_rect(0.0, 0.0, rules.page_width, rules.page_height):
        raise IllegalAction(
            "off_page",
            f"draw_base: a base at ({x:g}, {y:g}) of radius {r:g} does not lie "
            f"wholly on the {rules.page_width:g} × {rules.page_height:g} page",
        )
    half = rules.half_y
    in_half = y - r >= half if side == "blue" else y + r <= half
    if not in_half:
        where = f"y ≥ {half:g}" if side == "blue" else f"y ≤ {half:g}"
        raise IllegalAction(
            "wrong_half",
            f"draw_base: {side}'s bases lie wholly in {where}; a base at ({x:g}, {y:g}) of radius {r:g} "
            f"spans y {y - r:g}–{y + r:g}",
        )
    for base in bases:
        gap = shape.gap_to(base.shape)
        if gap < rules.base_gap:
            raise IllegalAction(
                "too_close_to_base",
                f"draw_base: only {max(gap, 0.0):.1f} of paper to the wall "
                f"of {base.id}; base_gap is {rules.base_gap:g}",
            )


def _add_base(
    state: State, side: Side, x: float, y: float, r: float, shared: bool = False
) -> tuple[State, list[Event]]:
    rules = state.rules
    # Every page has the same ids (b1s1, b1s2 …): interned, a server's thousand pages share one copy.
    base_id = sys.intern(f"b{len(state.bases) + 1}")
    base = Base(base_id, side, x, y, r, rules.soldiers_per_base)
    if shared:  # a quick set-up's: the base and its jotted soldiers as every page of the preset has them
        base, soldiers = shared_view(("jotted", base, rules.dot_radius), lambda: (base, _jotted(rules, base)))
    else:  # drawn by hand: no other page is likely to draw just this
        soldiers = _jotted(rules, base)
    state = evolve(state, bases=(*state.bases, base), soldiers=state.soldiers + soldiers)
    event: Event = {
        "type": "base_drawn",
        "base": {"id": base_id, "side": side, "x": x, "y": y, "r": r},
        "soldiers": [{"id": s.id, "x": s.x, "y": s.y} for s in soldiers],
    }
    return state, [event]


def _jotted(rules: RuleSet, base: Base) -> tuple[Soldier, ...]:
    """The base's soldiers, jotted in their fixed pattern (engine/jotting.py)."""
    dots = jot(base.x, base.y, base.r, base.capacity, rules.dot_radius, flip=base.side == "red")
    return tuple(
        Soldier(sys.intern(f"{base.id}s{k + 1}"), base.side, sx, sy) for k, (sx, sy) in enumerate(dots)
    )


def _maybe_open_positioning(state: State, events: list[Event]) -> tuple[State, list[Event]]:
    if len(state.bases) == 2 * state.rules.bases_per_side:
        state = evolve(state, phase="positioning")
        events.append({"type": "phase", "phase": "positioning"})
    return state, events


def quick_layout(rules: RuleSet) -> list[tuple[float, float, float]]:
    """Returns blue's quick-setup bases (x, y, r): rows across blue's half, the fuller rows at the back,
    all of one radius (the middle of the limits, smaller if the rows need it). Red gets the same set
    turned half a turn about the page's centre.

    >>> [(round(x), y, r) for x, y, r in quick_layout(RuleSet.preset("quick"))]
    [(167, 1050.0, 70.0), (500, 1050.0, 70.0), (833, 1050.0, 70.0)]
    """
    k = rules.bases_per_side
    rows = 1 if k <= 3 else 2 if k <= 6 else 3
    per_row = [k // rows + (1 if i >= rows - k % rows else 0) for i in range(rows)]  # front row first
    half_height = rules.page_height / 2
    row_step = half_height / (rows + 1)
    radius = (rules.base_radius_min + rules.base_radius_max) / 2
    radius = min(radius, (row_step - rules.base_gap) / 2, row_step - rules.base_gap / 2)
    for count in per_row:
        cell = rules.page_width / count
        radius = min(radius, (cell - rules.base_gap) / 2)
    layout = []
    for i, count in enumerate(per_row):
        y = half_height + (i + 1) * row_step
        for j in range(count):
            layout.append(((j + 0.5) * rules.page_width / count, y, radius))
    return layout


def quick_setup(state: State, side: Side) -> tuple[State, list[Event]]:
    """Draws a fair mirrored set of bases for both sides (alternating, blue first), jotted, and opens
    positioning. Only before any base is drawn, by the side to draw."""
    events: list[Event] = []
    for owner, x, y, r in check_quick_setup(state, side):
        state, drawn = _add_base(state, owner, x, y, r, shared=True)
        events.extend(drawn)
    # Every quick set-up of a preset shares its bases and soldiers, and so the soldiers' views while
    # nobody has moved or been crossed out (interning.py): a server's fresh pages hold one copy.
    state = evolve(state, bases=shared_tuple(state.bases), soldiers=shared_tuple(state.soldiers))
    return _maybe_open_positioning(state, events)


def check_quick_setup(state: State, side: Side) -> list[tuple[Side, float, float, float]]:
    """Refuses a `quick_setup` the rules forbid now; else returns the bases it draws, in order, as
    (owner, x, y, r), each checked by the ordinary placement rules against those before it."""
    require_phase(state, "bases", "quick_setup")
    require_actor(state, side, "quick_setup")
    if state.bases:
        raise IllegalAction("bases_already_drawn", "quick_setup: only before any base is drawn")
    rules = state.rules
    drawn: list[Base] = []
    for x, y, r in quick_layout(rules):
        mirrored: tuple[tuple[Side, float, float], ...] = (
            ("blue", x, y),
            ("red", rules.page_width - x, rules.page_height - y),  # half a turn about the page centre
        )
        for owner, bx, by in mirrored:
            try:
                check_placement(rules, drawn, owner, bx, by, r)
            except IllegalAction as refusal:
                raise IllegalAction(
                    "quick_setup_impossible",
                    f"quick_setup: these rules leave no room for a mirrored set ({refusal.message})",
                ) from None
            drawn.append(Base(f"b{len(drawn) + 1}", owner, bx, by, r, rules.soldiers_per_base))
    return [(base.side, base.x, base.y, base.r) for base in drawn]


def position(state: State, side: Side, action: Position) -> tuple[State, list[Event]]:
    """Moves some of the arranging side's soldiers; the whole batch is checked after it is applied."""
    soldiers, moved = check_position(state, side, action)
    state = evolve(state, soldiers=soldiers)
    placed = [{"id": s.id, "x": s.x, "y": s.y} for s in (soldiers[i] for i in moved)]
    return state, [{"type": "positioned", "side": side, "soldiers": placed}]


def check_position(state: State, side: Side, action: Position) -> tuple[tuple[Soldier, ...], list[int]]:
    """Refuses a `position` the rules forbid now; else returns the soldiers after the batch and the
    indexes moved, in page order."""
    require_phase(state, "positioning", "position")
    require_actor(state, side, "position")
    updates: dict[int, Soldier] = {}
    for soldier_id, x, y in action.soldiers:
        index = state.soldier_index[soldier_id]
        old = state.soldiers[index]
        if old.side != side:
            raise IllegalAction("not_your_soldier", f"position: {soldier_id} is {old.side}'s soldier")
        updates[index] = Soldier(old.id, old.side, x, y)
    soldiers = replace_soldiers(state, updates)
    own_bases = state.bases_of(side)
    overlapping = first_overlaps(soldiers, list(updates), 2 * state.rules.dot_radius)
    for index in updates:
        refusal = stand_refusal(state.rules, own_bases, soldiers, index, overlapping.get(index))
        if refusal is not None:
            raise refusal
    return soldiers, sorted(updates)


def stand_refusal(
    rules: RuleSet, own_bases: Sequence[Base], soldiers: Sequence[Soldier], index: int, overlapped: int | None
) -> IllegalAction | None:
    """Returns why soldier `index` may not stand where `soldiers` puts him (`overlapped`: the first
    soldier his dot overlaps, if any), or None: inside or within `outside_margin` of an own base, wholly
    on the page, on nobody's dot."""
    moved = soldiers[index]
    x, y = moved.x, moved.y
    reach = rules.outside_margin
    if not any((x - b.x) ** 2 + (y - b.y) ** 2 <= (b.r + reach) ** 2 for b in own_bases):
        return IllegalAction(
            "outside_own_bases",
            f"position: {moved.id} at ({x:g}, {y:g}) is neither inside "
            f"an own base nor within {reach:g} outside its wall",
        )
    dr = rules.dot_radius
    if not (dr <= x <= rules.page_width - dr and dr <= y <= rules.page_height - dr):
        return IllegalAction(
            "off_page", f"position: {moved.id}'s dot at ({x:g}, {y:g}) is not wholly on the page"
        )
    if overlapped is not None:
        return IllegalAction(
            "overlapping",
            f"position: {moved.id} at ({x:g}, {y:g}) overlaps {soldiers[overlapped].id}; "
            f"centres must be at least {2 * dr:g} apart",
        )
    return None


def first_overlaps(soldiers: Sequence[Soldier], moved: list[int], spacing: float) -> dict[int, int]:
    """Maps each moved soldier whose dot overlaps a living one (centres closer than `spacing`) to the
    first such soldier in page order.

    Shapely's tree finds the candidates (`dwithin`, point to point, so no circle is ever approximated by
    a polygon) in O(n log n) rather than testing every pair; the exact rule, `dx² + dy² < spacing²`, then
    decides, so a dot exactly `spacing` away is never refused.

    >>> from dotfight.engine.state import Soldier
    >>> dots = [Soldier("a", "blue", 0.0, 0.0), Soldier("b", "blue", 14.0, 0.0)]
    >>> first_overlaps(dots, [0], 14.0)  # exactly 14 apart: touching, not overlapping
    {}
    >>> dots.append(Soldier("c", "blue", 27.0, 0.0))
    >>> first_overlaps(dots, [0, 2], 14.0)
    {2: 1}
    """
    if not moved:
        return {}
    living = [i for i, soldier in enumerate(soldiers) if soldier.alive]
    limit = spacing * spacing
    if len(moved) * len(living) <= _SCAN_PAIRS:  # a tree costs more than a scan of a few pairs
        first: dict[int, int] = {}
        for j in moved:
            a = soldiers[j]
            for k in living:
                b = soldiers[k]
                if j != k and (a.x - b.x) ** 2 + (a.y - b.y) ** 2 < limit:
                    first[j] = k
                    break
        return first
    tree = shapely.STRtree(shapely.points([(soldiers[i].x, soldiers[i].y) for i in living]))
    queried = shapely.points([(soldiers[j].x, soldiers[j].y) for j in moved])
    # A hair of slack keeps every exact overlap among the candidates whatever GEOS's rounding.
    pairs = tree.query(queried, predicate="dwithin", distance=spacing + 1e-9)
    first = {}
    for q, t in pairs.T.tolist():
        j, k = moved[q], living[t]
        a, b = soldiers[j], soldiers[k]
        if j != k and (a.x - b.x) ** 2 + (a.y - b.y) ** 2 < limit and k < first.get(j, len(soldiers)):
            first[j] = k
    return first


def ready(state: State, side: Side) -> tuple[State, list[Event]]:
    """Makes the arranging side's arrangement final; after red, play begins with blue's first turn."""
    check_ready(state, side)
    flags = list(state.ready)
    flags[side_index(side)] = True
    state = evolve(state, ready=(flags[0], flags[1]))
    events: list[Event] = [
        {
            "type": "positioned",
            "side": side,
            "soldiers": [{"id": s.id, "x": s.x, "y": s.y} for s in state.soldiers if s.side == side],
        }
    ]
    if all(flags):
        state = evolve(state, phase="play")
        events.append({"type": "phase", "phase": "play"})
        state, started = start_turn(state, "blue")
        events.extend(started)
    return state, events


def check_ready(state: State, side: Side) -> None:
    """Refuses a `ready` outside positioning or by the side not arranging."""
    require_phase(state, "positioning", "ready")
    require_actor(state, side, "ready")
