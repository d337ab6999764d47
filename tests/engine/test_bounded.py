"""No rule value makes a move expensive (issue 9, item 1): the arrival free-spot search is bounded by a
constant whatever the rules, and lands everyone exactly where the old, unbounded search did."""

from __future__ import annotations

import itertools
import math
import time
import tracemalloc
from functools import lru_cache
from unittest import mock

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from dotfight.engine import Base, RuleSet, Soldier, State, apply, check_new_page, new_page, setup
from dotfight.engine.jotting import jot, min_spacing_radius
from dotfight.engine.send import MAX_SPOTS_TRIED, _grid_outwards, free_spot, free_spot_search

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---- the search as it was (the reference: every stored page's arrivals were placed by it) ----------


def old_free_spot(
    base: Base, taken: list[tuple[float, float]], dot_radius: float, capacity: int
) -> tuple[float, float]:
    need = (2 * dot_radius) ** 2
    best: tuple[float, float] = (base.x, base.y)
    best_clearance = -1.0
    for x, y in old_candidates(base, dot_radius, capacity):
        clearance = min(((x - tx) ** 2 + (y - ty) ** 2 for tx, ty in taken), default=math.inf)
        if clearance >= need:
            return x, y
        if clearance > best_clearance:
            best, best_clearance = (x, y), clearance
    return best


@lru_cache(maxsize=64)
def old_candidates(base: Base, dot_radius: float, capacity: int) -> tuple[tuple[float, float], ...]:
    spots = jot(base.x, base.y, base.r, capacity, dot_radius, flip=base.side == "red")
    step = 2 * dot_radius * (1 + 1e-9)
    limit = base.r - dot_radius
    grid: list[tuple[float, float, float, float]] = []
    rows = int(limit / (step * math.sqrt(3) / 2)) + 1
    cols = int(limit / step) + 2
    for row in range(-rows, rows + 1):
        gy = row * step * math.sqrt(3) / 2
        shift = step / 2 if row % 2 else 0.0
        for col in range(-cols, cols + 1):
            gx = col * step + shift
            distance = math.hypot(gx, gy)
            if distance <= limit:
                grid.append((distance, math.atan2(gy, gx), base.x + gx, base.y + gy))
    grid.sort()
    return (*spots, *((x, y) for _, _, x, y in grid))


# ---- rings and what stands in them ---------------------------------------------------------------


@st.composite
def rings(draw: st.DrawFn, max_ratio: float = 60.0) -> tuple[Base, float, int, list[tuple[float, float]]]:
    """A ring, a dot radius (base up to `max_ratio` dot radii), a capacity that fits, and the dots
    already standing: jotted men, men near the centre, men on the grid's own points, men outside."""
    capacity = draw(st.integers(min_value=1, max_value=20))
    r = draw(st.floats(min_value=40.0, max_value=100.0))
    dot = draw(st.floats(min_value=r / max_ratio, max_value=r / 3))
    assume(min_spacing_radius(capacity, dot) <= r)
    side = draw(st.sampled_from(["blue", "red"]))
    base = Base("b1", side, draw(st.floats(0.0, 1000.0)), draw(st.floats(0.0, 1400.0)), r, capacity)
    taken: list[tuple[float, float]] = []
    spots = jot(base.x, base.y, r, capacity, dot, flip=side == "red")
    taken += draw(st.lists(st.sampled_from(spots), max_size=capacity, unique=True))
    grid = old_candidates(base, dot, capacity)[capacity:]
    if grid:
        first = draw(st.integers(min_value=0, max_value=min(len(grid), 200)))
        taken += grid[:first]  # the grid's own first points, so the search has to walk on
    for _ in range(draw(st.integers(min_value=0, max_value=30))):
        angle = draw(st.floats(0.0, 2 * math.pi))
        distance = draw(st.floats(0.0, r + 4 * dot + 10.0))  # past the reach the search looks at, too
        taken.append((base.x + distance * math.cos(angle), base.y + distance * math.sin(angle)))
    for _ in range(draw(st.integers(min_value=0, max_value=24))):  # a crowd on and just outside the wall
        angle = draw(st.floats(0.0, 2 * math.pi))
        distance = r + draw(st.floats(-dot, 3 * dot))
        taken.append((base.x + distance * math.cos(angle), base.y + distance * math.sin(angle)))
    return base, dot, capacity, taken


@SETTINGS
@given(rings())
def test_everyone_lands_where_the_old_search_put_him(
    ring: tuple[Base, float, int, list[tuple[float, float]]],
) -> None:
    base, dot, capacity, taken = ring
    assert free_spot(base, taken, dot, capacity) == old_free_spot(base, taken, dot, capacity)


@SETTINGS
@given(rings(max_ratio=8.0))
def test_a_crowded_ring_still_takes_him_where_the_old_search_did(
    ring: tuple[Base, float, int, list[tuple[float, float]]],
) -> None:
    """Big dots in a small ring: often no spot is free, and the most clearance decides."""
    base, dot, capacity, taken = ring
    assert free_spot(base, taken, dot, capacity) == old_free_spot(base, taken, dot, capacity)


@SETTINGS
@given(rings(max_ratio=100.0), st.floats(min_value=1e-3, max_value=1.0))
def test_the_search_tries_a_bounded_number_of_spots(
    ring: tuple[Base, float, int, list[tuple[float, float]]], shrink: float
) -> None:
    """For rule sets new pages accept (base up to 100 dot radii) and for stored ones with any smaller dot."""
    base, dot, capacity, taken = ring
    for radius in (dot, dot * shrink):
        _, tried = free_spot_search(base, taken, radius, capacity)
        assert tried <= MAX_SPOTS_TRIED


@st.composite
def new_page_rings(draw: st.DrawFn) -> tuple[RuleSet, Base, list[tuple[float, float]]]:
    """A rule set `check_new_page` accepts, one of its rings, and as many dots as its page can hold
    standing on the ring's jotting spots and first grid points (the search's worst case), or anywhere."""
    base_max = draw(st.floats(min_value=40.0, max_value=400.0))
    base_min = draw(st.floats(min_value=20.0, max_value=base_max))
    soldiers = draw(st.integers(min_value=1, max_value=20))
    bases = draw(st.integers(min_value=1, max_value=8))
    dot = draw(st.floats(min_value=base_max / 100, max_value=base_max / 100 * 20))
    assume(min_spacing_radius(soldiers, dot) <= base_min)
    rules = RuleSet.preset(
        "custom",
        page_width=3000.0,
        page_height=4000.0,
        base_radius_min=base_min,
        base_radius_max=base_max,
        dot_radius=dot,
        soldiers_per_base=soldiers,
        bases_per_side=bases,
    )
    check_new_page(rules)
    r = draw(st.floats(min_value=base_min, max_value=base_max))
    base = Base("b1", "blue", 1500.0, 3000.0, r, soldiers)
    room = 2 * bases * soldiers - 1  # everyone on the page but the one arriving
    grid = itertools.islice(_grid_outwards(base, dot), 2 * room + 1)
    crowd = [*jot(base.x, base.y, r, soldiers, dot, flip=False), *grid]
    if draw(st.booleans()):
        taken = crowd[:room]
    else:
        taken = draw(st.lists(st.sampled_from(crowd[: 2 * room + 1]), max_size=room))
    return rules, base, taken


@SETTINGS
@given(new_page_rings())
def test_on_pages_check_new_page_accepts_the_search_stays_under_the_bound(
    case: tuple[RuleSet, Base, list[tuple[float, float]]],
) -> None:
    rules, base, taken = case
    _, tried = free_spot_search(base, taken, rules.dot_radius, rules.soldiers_per_base)
    assert tried <= MAX_SPOTS_TRIED


def test_the_worst_crowd_a_page_can_hold_stays_under_the_bound() -> None:
    """Every soldier a page can have standing on the ring's first grid points, one each."""
    base = Base("b1", "blue", 500.0, 1100.0, 100.0, 20)
    for dot in (1.0, 0.001):  # the old search is the reference only where it could still run
        spots = jot(base.x, base.y, base.r, 20, dot, flip=False)
        grid = list(itertools.islice(_grid_outwards(base, dot), 2 * 8 * 20 - 20))
        spot, tried = free_spot_search(base, spots + grid, dot, 20)
        assert 2 * 8 * 20 < tried <= MAX_SPOTS_TRIED
        if dot == 1.0:
            assert grid == list(old_candidates(base, dot, 20)[20 : 20 + len(grid)])
            assert spot == old_free_spot(base, spots + grid, dot, 20)


# ---- a stored page with extreme rules ---------------------------------------------------------


def convoy_about_to_arrive(rules: RuleSet) -> State:
    """Quick setup, blue sends five men from b1 to b3 with its flick still to make."""
    state = new_page(rules, seed=11)
    for side, kind in [("blue", "quick_setup"), ("blue", "ready"), ("red", "ready")]:
        state, _ = apply(state, side, {"type": kind})
    men = [s.id for s in state.soldiers if s.id.startswith("b1s")][:5]
    state, _ = apply(state, "blue", {"type": "send", "from": "b1", "to": "b3", "soldiers": men})
    state, _ = apply(
        state, "blue", {"type": "flick", "soldier": "b5s1", "kind": "snipe", "vector": [300.0, 0.0]}
    )
    return state


def test_a_stored_page_with_a_tiny_dot_arrives_quickly_in_little_memory() -> None:
    rules = RuleSet.from_json({"preset": "quick", "dot_radius": 0.001})  # as a stored page loads
    state = convoy_about_to_arrive(rules)
    assert state.actor == "red"
    tracemalloc.start()
    started = time.perf_counter()
    _, events = apply(
        state, "red", {"type": "flick", "soldier": "b2s1", "kind": "snipe", "vector": [-300.0, 0.0]}
    )
    elapsed = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    arrived = [e for e in events if e["type"] == "arrived"]
    assert arrived and len(arrived[0]["soldiers"]) == 5
    assert elapsed < 0.5
    assert peak < 20 * 2**20  # the unbounded grid took gigabytes here


def test_new_pages_refuse_the_tiny_dot_and_accept_the_presets() -> None:
    rules = RuleSet.from_json({"preset": "quick", "dot_radius": 0.001})
    try:
        check_new_page(rules)
    except ValueError as refusal:
        assert "dot_radius" in str(refusal)
    else:
        raise AssertionError("a dot a hundred-thousandth of the base was accepted for a new page")


@SETTINGS
@given(
    st.lists(st.tuples(st.floats(0.0, 60.0), st.floats(0.0, 60.0), st.booleans()), min_size=1, max_size=40),
    st.data(),
)
def test_the_overlap_scan_and_the_tree_agree(
    dots: list[tuple[float, float, bool]], data: st.DataObject
) -> None:
    """A few moved dots are checked by a plain scan, many by shapely's tree: the answers are the same."""
    moved = data.draw(st.lists(st.sampled_from(range(len(dots))), unique=True, min_size=1))
    # Moved dots stand (as in `position`); the others may be crossed out.
    soldiers = [Soldier(f"s{k}", "blue", x, y, alive or k in moved) for k, (x, y, alive) in enumerate(dots)]
    scanned = setup.first_overlaps(soldiers, moved, 14.0)
    with mock.patch.object(setup, "_SCAN_PAIRS", -1):
        assert setup.first_overlaps(soldiers, moved, 14.0) == scanned


def test_a_dot_just_outside_the_wall_still_blocks_a_spot_inside() -> None:
    """Every spot is taken but the grid's centre, nearly blocked, and one by the wall, blocked only by a
    dot standing just outside the wall: the search must still see that dot, and take the centre (the
    most clearance) rather than the spot by the wall."""
    dot, need = 5.0, 100.0

    def clear(spot: tuple[float, float], candidates: tuple[tuple[float, float], ...]) -> bool:
        others = [c for c in candidates if c not in (candidates[3], spot)]
        return min((spot[0] - x) ** 2 + (spot[1] - y) ** 2 for x, y in others) >= need

    # A grid spot by the wall, past r − 1.4 dots: a dot 1.9 dots beyond it stands past r + dot/2.
    for half in range(120, 160):
        base = Base("b1", "blue", 500.0, 1100.0, half / 2, 3)
        candidates = old_candidates(base, dot, 3)
        by_wall = [
            c
            for c in candidates[3:]
            if math.hypot(c[0] - base.x, c[1] - base.y) > base.r - 1.4 * dot and clear(c, candidates)
        ]
        if by_wall:
            break
    centre, (gx, gy) = candidates[3], by_wall[0]  # the grid's first point, and one by the wall
    out = math.hypot(gx - base.x, gy - base.y)
    ux, uy = (gx - base.x) / out, (gy - base.y) / out
    rim = (base.x + ux * (out + 1.9 * dot), base.y + uy * (out + 1.9 * dot))
    near_centre = (centre[0] - ux * 1.95 * dot, centre[1] - uy * 1.95 * dot)
    taken = [c for c in candidates if c not in (centre, (gx, gy))] + [near_centre]
    assert old_free_spot(base, taken, dot, 3) == (gx, gy)  # without the rim dot, that spot is free
    taken.append(rim)
    assert free_spot(base, taken, dot, 3) == old_free_spot(base, taken, dot, 3) == centre
