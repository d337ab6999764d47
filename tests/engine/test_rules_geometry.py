"""The geometry layer: crossing points exact to 1e-9, the page edge, and the cached arrays kept in step."""

from __future__ import annotations

import contextlib
import math

import pytest

from dotfight.engine import IllegalAction, RuleSet, Side, State, apply
from dotfight.engine.geometry import Circle, edge_distance, quadratic_roots
from dotfight.engine.views import Arrays
from tests.engine.conftest import play_ready


@pytest.mark.parametrize(
    ("px", "py", "angle", "cx", "cy", "r"),
    [
        (0, 0, 0.3, 500, 160, 80),
        (999.5, 3, 2.9, 10, 300, 95),
        (500, 700, -1.2, 560, 500, 7),
        (1, 1, 0.7854, 700, 701, 40),
    ],
)
def test_crossing_points_lie_on_the_circle_to_1e_9(
    px: float, py: float, angle: float, cx: float, cy: float, r: float
) -> None:
    ux, uy = math.cos(angle), math.sin(angle)
    for t in Circle(cx, cy, r).crossings(px, py, ux, uy):
        assert math.hypot(px + ux * t - cx, py + uy * t - cy) == pytest.approx(r, abs=1e-9)


def test_a_far_circle_grazed_nearly_tangent_still_gives_exact_points() -> None:
    # Cancellation-prone case: the start is far away and the line almost tangent.
    px, py, ux, uy = 0.0, 0.0, 1.0, 0.0
    near, far = quadratic_roots(ux * (px - 1500.0) + uy * (py - 79.999), 1500.0**2 + 79.999**2 - 80.0**2) or (
        0,
        0,
    )
    for t in (near, far):
        assert math.hypot(t - 1500.0, -79.999) == pytest.approx(80.0, abs=1e-9)


def test_a_tangent_is_no_crossing_and_a_miss_is_none() -> None:
    assert Circle(0, 10, 10).crossings(-50, 0, 1, 0) == []
    assert quadratic_roots(0.0, 1.0) is None


def test_edge_distance() -> None:
    assert edge_distance(300, 200, 0, -1, 1000, 1400) == 200
    assert edge_distance(300, 200, 1, 0, 1000, 1400) == 700
    assert edge_distance(0, 0, -1, 0, 1000, 1400) == 0
    c = math.sqrt(0.5)
    assert edge_distance(900, 1300, c, c, 1000, 1400) == pytest.approx(100 / c, abs=1e-12)


def test_the_cached_arrays_stay_in_step_with_the_page_through_play() -> None:
    state = play_ready(RuleSet.preset("classic"), seed=21)
    for move in range(40):
        if state.phase == "over":
            break
        side = state.actor
        assert side is not None
        if move % 3 == 0:
            state = _try_a_send(state, side)
        mover = state.soldier(state.flickable(side)[0])
        target = next(s for s in state.soldiers if s.alive and s.side != side)
        kind = "lunge" if move % 2 else "snipe"
        if state.turn is not None and state.turn.chain is not None:
            kind = "lunge"
        state, _ = apply(
            state,
            side,
            {
                "type": "flick",
                "soldier": mover.id,
                "kind": kind,
                "vector": [target.x - mover.x, target.y - mover.y],
            },
        )
        cached, fresh = state.arrays, Arrays.build(state)
        assert cached.home == fresh.home and cached.counted == fresh.counted
        assert cached.garrison == fresh.garrison
        assert cached.all_x.tolist() == fresh.all_x.tolist() and cached.all_y.tolist() == fresh.all_y.tolist()
        assert cached.garrison == [state.garrison(b) for b in state.bases]


def _try_a_send(state: State, side: Side) -> State:
    """Sends the first man of the side's first manned base to its next base, when the rules allow."""
    bases = state.bases_of(side)
    for source in bases:
        inside = [
            s.id
            for s in state.soldiers
            if s.alive and s.side == side and not s.on_road and source.contains(s.x, s.y)
        ]
        if inside:
            to = next(b for b in bases if b.id != source.id)
            with contextlib.suppress(IllegalAction):  # e.g. it would leave nobody to flick
                state, _ = apply(
                    state, side, {"type": "send", "from": source.id, "to": to.id, "soldiers": inside[:2]}
                )
            return state
    return state
