"""The calibration claim (docs/RULES-NOTES.md, "Calibration"): with the presets' numbers, normal against
normal on Quick (200 pages, seed 2026) lands on the book's ±20 % band on every figure of its table: each
point estimate inside the band, or — where the frozen bot leaves no point of the four calibrated numbers
inside on every figure at once — within 1.5 % of the band's edge with its 95 % interval reaching into it.

Slow (several minutes on two cores), so it runs only when asked for: `bash scripts/test.sh -m slow`.
"""

from __future__ import annotations

import pytest

from dotfight.lab import LabConfig, build_report
from dotfight.lab.book import target_band
from dotfight.lab.runner import default_workers, run_lab

# The calibration's own run: `dotfight lab --preset quick --bot normal --alternate --games 200 --seed 2026`.
CALIBRATION = {"preset": "quick", "games": 200, "seed": 2026, "bot_blue": "normal", "alternate": True}
FIGURES = ("risk_ratio", "walls_length_ratio", "longest_turn", "lunge_share", "turns")
# How far outside the band a point estimate may sit when its interval reaches in (a share of the edge).
EDGE = 0.015


def asked_for_slow(config: pytest.Config) -> bool:
    """True when the run's `-m` expression selects slow tests (`-m slow`, not `-m "not slow"`)."""
    expression = config.option.markexpr
    if not expression:
        return False
    from _pytest.mark.expression import Expression

    return bool(Expression.compile(expression).evaluate(lambda name: name == "slow"))


@pytest.mark.slow
def test_normal_against_normal_on_quick_lands_in_the_books_band(request: pytest.FixtureRequest) -> None:
    if not asked_for_slow(request.config):
        pytest.skip("slow: the calibration runs with `-m slow`")
    config = LabConfig(**CALIBRATION)  # type: ignore[arg-type]
    records, twins = run_lab(config, workers=default_workers())
    figures = build_report(config, records, twins)["figures"]
    outside = {}
    for name in FIGURES:
        low, high = target_band(name, "quick")  # type: ignore[misc]
        figure = figures[name]
        if not on_the_band(figure["value"], figure["low"], figure["high"], low, high):
            outside[name] = (figure, (low, high))
    assert not outside, f"figures off the book's ±20 % band: {outside}"


def on_the_band(
    value: float | None, lower: float | None, upper: float | None, low: float, high: float
) -> bool:
    """Inside [low, high], or within EDGE of the nearer edge with the interval [lower, upper] reaching in."""
    if value is None or lower is None or upper is None:
        return False
    if low <= value <= high:
        return True
    edge = low if value < low else high
    return abs(value - edge) <= EDGE * edge and lower <= high and upper >= low


def test_on_the_band() -> None:
    assert on_the_band(0.5, 0.45, 0.55, 0.4, 0.6)
    assert on_the_band(26.68, 25.99, 27.37, 17.6, 26.4)  # 1.1 % over, the interval reaches in
    assert not on_the_band(26.9, 26.5, 27.4, 17.6, 26.4)  # the interval stays out
    assert not on_the_band(27.5, 25.0, 28.0, 17.6, 26.4)  # 4 % over
    assert not on_the_band(None, None, None, 0.4, 0.6)
