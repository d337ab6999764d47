"""The calibration claim (docs/RULES-NOTES.md, "Calibration"): with the presets' numbers, normal against
normal on Quick lands within ±20 % of the book's lab on every figure of its table.

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
        value = figures[name]["value"]
        if value is None or not low <= value <= high:
            outside[name] = (value, (low, high))
    assert not outside, f"figures outside the book's ±20 % band: {outside}"
