"""The rules lab's report: its figures, and that it depends only on the seed (not on the worker count)."""

from __future__ import annotations

import json

import pytest

from dotfight.engine import RuleSetError
from dotfight.lab import LabConfig, build_report, run_pages
from dotfight.lab.page import play_page

SMALL = {"bases_per_side": 2, "soldiers_per_base": 3}


def small_config(**changes: object) -> LabConfig:
    settings: dict[str, object] = {"preset": "custom", "overrides": dict(SMALL), "games": 6, "seed": 3}
    settings.update(changes)
    return LabConfig(**settings)  # type: ignore[arg-type]


def test_the_report_has_every_figure() -> None:
    config = small_config()
    report = build_report(config, run_pages(config, workers=1))
    assert report["pages"] == 6
    assert set(report["turns_per_page"]) == {"mean", "median", "p90", "max"}
    assert set(report["longest_turn_flicks"]) == {"mean", "max"}
    assert 0.0 <= report["lunge_share"] <= 1.0
    walls = report["inside_vs_outside"]
    assert set(walls) == {"inside", "outside", "ratio"}
    assert walls["inside"]["men_turns"] > 0
    assert set(report["endings"]) == {"all_crossed_out", "resigned", "turn_cap", "setup_cap"}
    assert sum(report["endings"].values()) == 6
    assert report["wins"]["blue"] + report["wins"]["red"] + report["wins"]["none"] == 6
    assert report["rules"]["bases_per_side"] == 2
    assert report["config"]["overrides"] == SMALL
    json.dumps(report, allow_nan=False)  # plain JSON, no NaN


def test_figures_agree_with_the_pages() -> None:
    config = small_config(games=4)
    records = run_pages(config, workers=1)
    report = build_report(config, records)
    assert report["flicks"] == sum(r.flicks for r in records)
    assert report["longest_turn_flicks"]["max"] == max(r.longest_turn_flicks for r in records)
    for r in records:
        assert r.lunges <= r.flicks
        assert r.longest_turn_flicks >= 1
        assert r.inside_crossed <= r.inside_men and r.outside_crossed <= r.outside_men
    blue_wins = sum(r.winner == "blue" for r in records)
    decided = sum(r.winner is not None for r in records)
    assert report["first_side_win_rate"] == pytest.approx(blue_wins / decided)


def test_the_same_seed_gives_the_same_report_whatever_the_workers() -> None:
    config = small_config(games=8)
    one = build_report(config, run_pages(config, workers=1))
    two = build_report(config, run_pages(config, workers=2))
    assert one == two
    other = build_report(small_config(games=8, seed=4), run_pages(small_config(games=8, seed=4), workers=1))
    assert other != one


def test_a_page_depends_only_on_the_seed_and_its_index() -> None:
    config = small_config(games=10)
    assert play_page(config, 7) == play_page(small_config(games=50), 7)
    assert play_page(config, 7) != play_page(config, 8)


def test_pages_past_the_turn_cap_are_counted_apart() -> None:
    config = small_config(games=3, turn_cap=2)
    report = build_report(config, run_pages(config, workers=1))
    assert report["endings"]["turn_cap"] == 3
    assert report["wins"]["none"] == 3
    assert report["turns_per_page"]["max"] == 2
    assert report["first_side_win_rate"] is None


def test_bots_can_swap_colours_for_a_fair_comparison() -> None:
    config = small_config(games=4, bot_blue="easy", bot_red="normal", alternate=True)
    records = run_pages(config, workers=1)
    assert [(r.blue, r.red) for r in records] == [("easy", "normal"), ("normal", "easy")] * 2
    report = build_report(config, records)
    assert set(report["by_strength"]) == {"easy", "normal"}
    assert report["by_strength"]["easy"]["pages"] == 4


def test_bad_rules_and_bots_are_refused_before_any_page() -> None:
    with pytest.raises(RuleSetError, match="wall_loss_full"):
        small_config(overrides={"wall_loss_full": 7})
    with pytest.raises(RuleSetError, match="no_such_rule"):
        small_config(overrides={"no_such_rule": 1})
    with pytest.raises(ValueError, match="strength"):
        small_config(bot_blue="godlike")
