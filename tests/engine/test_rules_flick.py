"""RULES.md §4, flicking: power, the reach curve, wildness; and the page's own generator."""

from __future__ import annotations

import dataclasses
import math
import statistics

import pytest

from dotfight.engine import RuleSet, resolve_snipe
from dotfight.engine.flick import power, reach
from dotfight.engine.rng import normal, uniform
from tests.engine.conftest import LEGACY_SPREADS, Page, flick, steady_rules

D = math.hypot(1000, 1400)


@pytest.mark.parametrize(
    ("length", "t", "reach_frac"),
    [(1, 1 / 300, 0.2 + 0.8 / 300**2), (150, 0.5, 0.4), (300, 1.0, 1.0), (900, 1.0, 1.0), (30, 0.1, 0.208)],
)
def test_power_and_reach_follow_the_curve(length: float, t: float, reach_frac: float) -> None:
    page = Page()
    page.man("blue", 500, 1300, "gun")
    page.man("red", 900, 100)
    _, events = flick(page.build(), "blue", "gun", "snipe", (0, -length))
    ink = events[0]
    assert ink["power"] == pytest.approx(t, abs=1e-15)
    assert ink["reach"] == pytest.approx(D * reach_frac, abs=1e-9)
    assert reach(page.rules, power(page.rules, 0, length)) == pytest.approx(D * reach_frac, abs=1e-9)


def test_the_reach_curve_exponent_is_a_rule() -> None:
    rules = steady_rules(reach_curve=1)
    assert reach(rules, 0.5) == pytest.approx(D * 0.6, abs=1e-9)
    assert reach(rules.replace(reach_min_frac=1.0), 0.0) == pytest.approx(D, abs=1e-9)


def _deviations(rules: RuleSet, pull: float, last_stand: bool = False, n: int = 3000) -> list[float]:
    page = Page(rules, seed=2024)
    page.man("blue", 500, 1300, "gun")
    page.man("red", 900, 100)
    state = page.build(flicks=2 if last_stand else 1, last_stand=last_stand)
    out = []
    for draw in range(n):
        _, events = resolve_snipe(dataclasses.replace(state, rng=draw), "gun", (0, -pull))
        (x0, y0), (x1, y1) = events[0]["points"]
        out.append(math.atan2(y1 - y0, x1 - x0) + math.pi / 2)
    return out


CLIPPED_SD = 0.9865  # the standard deviation of a standard normal clipped to ±3


@pytest.mark.parametrize(
    ("pull", "last_stand", "sigma"),
    [(300, False, 0.10), (150, False, 0.025), (300, True, 0.05)],
)
def test_wildness_spread_statistics(pull: float, last_stand: bool, sigma: float) -> None:
    deviations = _deviations(RuleSet.preset("classic", **LEGACY_SPREADS), pull, last_stand)
    assert abs(statistics.fmean(deviations)) < 4 * sigma / math.sqrt(len(deviations))
    assert statistics.stdev(deviations) == pytest.approx(sigma * CLIPPED_SD, rel=0.05)
    assert max(abs(d) for d in deviations) <= 3 * sigma + 1e-12


def test_without_wildness_the_ink_goes_exactly_where_aimed() -> None:
    deviations = _deviations(steady_rules(), 300, n=20)
    assert all(abs(d) < 1e-12 for d in deviations)


def test_draws_are_a_pure_function_of_seed_and_counter() -> None:
    assert [normal(7, i) for i in range(5)] == [normal(7, i) for i in range(5)]
    assert normal(7, 0) != normal(8, 0) and normal(7, 0) != normal(7, 1)
    assert all(0.0 < uniform(2**128 - 1, i) < 1.0 for i in range(100))
    assert all(-3.0 <= normal(123, i) <= 3.0 for i in range(2000))
    # Values fixed once: the generator must never change under a page (pages replay forever).
    assert uniform(0, 0) == 0.1707562223721451
    assert normal(0, 0) == -0.9511811123615816
    assert normal(2**127 + 5, 12345) == 0.32603600692189877


def test_a_snipe_draws_exactly_one_number(page: Page) -> None:
    page.man("blue", 500, 1300, "gun")
    page.man("red", 900, 100)
    state = page.build()
    after, _ = flick(state, "blue", "gun", "snipe", (0, -300))
    assert after.rng == state.rng + 1
