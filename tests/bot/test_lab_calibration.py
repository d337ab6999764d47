"""The calibration claim (docs/RULES-NOTES.md, "Calibration"): with the presets' numbers, normal against
normal lands inside the book's ±20 % band — on Quick (200 pages and their free-walls twins, seed 2026)
every point estimate of the book's table, on Dawood's 5 × 10 (60 pages, seed 2026) the turns a page.

Slow (several minutes each on two cores), so they run only when asked for: `bash scripts/test.sh -m slow`.
"""

from __future__ import annotations

from typing import Any

import pytest

from dotfight.lab import LabConfig, build_report
from dotfight.lab.book import target_band
from dotfight.lab.runner import default_workers, run_lab

# The calibration's own runs:
# `dotfight lab --preset quick --bot normal --alternate --games 200 --seed 2026` and
# `dotfight lab --preset dawood --bot normal --alternate --games 60 --seed 2026 --no-twins`.
QUICK = {"preset": "quick", "games": 200, "seed": 2026, "bot_blue": "normal", "alternate": True}
DAWOOD = {"preset": "dawood", "games": 60, "seed": 2026, "bot_blue": "normal", "alternate": True}
FIGURES = ("risk_ratio", "walls_length_ratio", "longest_turn", "lunge_share", "turns")


def asked_for_slow(config: pytest.Config) -> bool:
    """True when the run's `-m` expression selects slow tests (`-m slow`, not `-m "not slow"`)."""
    expression = config.option.markexpr
    if not expression:
        return False
    from _pytest.mark.expression import Expression

    def is_slow(name: str, /, **_kwargs: str | int | bool | None) -> bool:
        return name == "slow"

    return bool(Expression.compile(expression).evaluate(is_slow))


def figures_of(settings: dict[str, Any], *, twins: bool = True) -> dict[str, Any]:
    """The report's figures of one lab run."""
    config = LabConfig(**settings)
    records, twin_records = run_lab(config, workers=default_workers(), twins=twins)
    figures: dict[str, Any] = build_report(config, records, twin_records)["figures"]
    # The run's figures in the log (`-rP` shows them for a passing test): what the docs quote.
    print(
        {
            name: figure and [figure["value"], figure["low"], figure["high"]]
            for name, figure in figures.items()
        }
    )
    return figures


def off_the_band(figures: dict[str, Any], names: tuple[str, ...], preset: str) -> dict[str, Any]:
    """The figures whose point estimate lies outside the book's band, with the band."""
    outside = {}
    for name in names:
        band = target_band(name, preset)
        assert band is not None, name
        value = figures[name]["value"]
        if value is None or not band[0] <= value <= band[1]:
            outside[name] = (figures[name], band)
    return outside


# Measured at the commit that set the presets (docs/RULES-NOTES.md, "Calibration"): every Quick figure
# inside (risk ratio 0.516, walls 1.267, longest turn 6.84, lunge share 0.765, 25.8 turns); 5 x 10 at
# 47.0 turns [45.0, 49.1] over the band's 43.2 (Quick wins, as issue 8 asks). Issue 23's
# `dotfight lab calibrate` (docs/LAB.md, "Report: dotfight lab calibrate") searched wildness, its curve
# and shake_sigmas together over 14 trials; the nearest point found, wildness 0.0634 / curve 3.43 /
# sigmas 2.97, plays this very run at 43.3 turns [41.2, 45.6], still 0.1 over the band's top, so the
# presets keep their numbers. Strict: once 5 x 10 lands inside, the mark must go.
DAWOOD_GAP = (
    "5 x 10 at 47.0 turns over the band's 43.2; the nearest point calibrate found (wildness 0.0634, "
    "curve 3.43, sigmas 2.97) plays 43.3 (docs/LAB.md); the presets are kept"
)


@pytest.mark.slow
def test_normal_against_normal_on_quick_lands_in_the_books_band(request: pytest.FixtureRequest) -> None:
    if not asked_for_slow(request.config):
        pytest.skip("slow: the calibration runs with `-m slow`")
    outside = off_the_band(figures_of(QUICK), FIGURES, "quick")
    assert not outside, f"figures off the book's ±20 % band: {outside}"


@pytest.mark.slow
@pytest.mark.xfail(reason=DAWOOD_GAP, strict=True)
def test_normal_against_normal_on_dawoods_five_by_ten_lands_in_the_books_band(
    request: pytest.FixtureRequest,
) -> None:
    if not asked_for_slow(request.config):
        pytest.skip("slow: the calibration runs with `-m slow`")
    outside = off_the_band(figures_of(DAWOOD, twins=False), ("turns",), "dawood")
    assert not outside, f"5 × 10 turns off the book's ±20 % band: {outside}"


def test_a_figure_counts_only_by_its_point_estimate() -> None:
    inside = {"turns": {"value": 26.4, "low": 30.0, "high": 31.0}}
    over = {"turns": {"value": 26.5, "low": 20.0, "high": 26.0}}
    assert off_the_band(inside, ("turns",), "quick") == {}
    assert set(off_the_band(over, ("turns",), "quick")) == {"turns"}
    assert set(off_the_band({"turns": {"value": None}}, ("turns",), "dawood")) == {"turns"}
