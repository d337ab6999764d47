"""The lab's figures of the book's table: every key, each with its 95 % interval, agreeing with the pages."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest

import dotfight.lab.page as page
from dotfight.lab import LabConfig, build_report, run_pages
from dotfight.lab.config import FREE_WALLS, make_bot
from dotfight.lab.page import MIX_KEYS, SETUP_CAP, play_page
from dotfight.lab.report import FIGURES, FINAL_BLOWS
from dotfight.lab.runner import run_lab
from dotfight.lab.stats import Bootstrap, wilson

SMALL = {"bases_per_side": 2, "soldiers_per_base": 3}


def small_config(**changes: object) -> LabConfig:
    settings: dict[str, object] = {"preset": "custom", "overrides": dict(SMALL), "games": 6, "seed": 3}
    settings.update(changes)
    return LabConfig(**settings)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def lab() -> tuple[LabConfig, dict[str, object], list, list]:  # type: ignore[type-arg]
    config = small_config(bot_red="normal", alternate=True)
    records, twins = run_lab(config, workers=1)
    assert twins is not None
    return config, build_report(config, records, twins), records, twins


def test_every_figure_of_the_table_has_a_value_and_an_interval(lab) -> None:  # type: ignore[no-untyped-def]
    _, report, _, _ = lab
    assert list(report["figures"]) == list(FIGURES)
    for name, figure in report["figures"].items():
        assert set(figure) == {"value", "low", "high", "method", "n"}, name
        assert figure["method"] == ("wilson" if "win_rate" in name else "bootstrap"), name
        assert figure["low"] <= figure["value"] <= figure["high"], name
    json.dumps(report, allow_nan=False)


def test_figures_agree_with_the_pages(lab) -> None:  # type: ignore[no-untyped-def]
    _, report, records, twins = lab
    figures = report["figures"]
    assert figures["turns"]["value"] == pytest.approx(sum(r.turns for r in records) / len(records))
    assert figures["rounds"]["value"] == pytest.approx(sum(math.ceil(r.turns / 2) for r in records) / 6)
    assert report["rounds_per_page"]["max"] == max(math.ceil(r.turns / 2) for r in records)
    free_mean = sum(r.turns for r in twins) / len(twins)
    assert report["free_walls"]["turns_per_page"]["mean"] == pytest.approx(free_mean, abs=1e-4)
    assert figures["walls_length_ratio"]["value"] == pytest.approx(figures["turns"]["value"] / free_mean)
    assert figures["risk_ratio"]["value"] == pytest.approx(report["inside_vs_outside"]["ratio"])
    assert figures["lunge_share"]["value"] == pytest.approx(report["lunge_share"])
    assert figures["longest_turn"]["value"] == pytest.approx(report["longest_turn_flicks"]["mean"], abs=1e-4)


def test_the_flick_mix_is_counted_per_side(lab) -> None:  # type: ignore[no-untyped-def]
    _, report, records, _ = lab
    mix = report["flick_mix"]
    assert set(mix) == {"blue", "red"}
    for side in mix.values():
        assert set(MIX_KEYS) <= set(side)
        assert side["flicks"] == side["snipes"] + side["lunges"] + side["chain_lunges"]
    assert mix["blue"]["flicks"] + mix["red"]["flicks"] == report["flicks"]
    lunges = sum(side["lunges"] + side["chain_lunges"] for side in mix.values())
    assert lunges == sum(r.lunges for r in records)
    # Easy lunges freely, so the page's mix has lunges; every chain link follows a lunge that killed.
    assert lunges > 0
    kills = sum(side["lunge_kills"] for side in mix.values())
    assert sum(side["chain_lunges"] for side in mix.values()) <= kills


def test_how_pages_end_is_counted(lab) -> None:  # type: ignore[no-untyped-def]
    _, report, records, _ = lab
    assert set(report["final_blow"]) == set(FINAL_BLOWS)
    assert sum(report["final_blow"].values()) == report["endings"]["all_crossed_out"] == 6
    assert [r.final_blow is not None for r in records] == [r.end == "all_crossed_out" for r in records]


def test_the_head_to_head_counts_each_players_wins_whatever_its_colour(lab) -> None:  # type: ignore[no-untyped-def]
    _, report, records, _ = lab
    duel = report["head_to_head"]
    assert (duel["a"], duel["b"]) == ("easy", "normal")
    easy_wins = sum(1 for r in records if r.winner is not None and getattr(r, r.winner) == "easy")
    assert duel["wins"] == {"a": easy_wins, "b": duel["decided"] - easy_wins}
    assert duel["win_rate_a"] == report["figures"]["win_rate_a"] == wilson(easy_wins, duel["decided"])
    assert duel["flick_mix"]["a"]["flicks"] + duel["flick_mix"]["b"]["flicks"] == report["flicks"]


def test_twin_pages_have_free_walls_and_the_same_seeds() -> None:
    config = small_config()
    twin = config.twin()
    rules = twin.rules()
    assert {name: getattr(rules, name) for name in FREE_WALLS} == FREE_WALLS
    assert config.rules().wall_loss_full > 0 and twin.to_json()["free_walls"] is True
    assert twin.page_seed(5) == config.page_seed(5) and twin.bot_seed(5, "red") == config.bot_seed(5, "red")
    assert play_page(twin, 1) != play_page(config, 1)


def test_without_twins_the_length_ratio_is_not_measured() -> None:
    config = small_config(games=2)
    records, twins = run_lab(config, workers=1, twins=False)
    report = build_report(config, records, twins)
    assert twins is None and report["free_walls"] is None
    assert report["figures"]["walls_length_ratio"] is None


def test_wilson_and_the_bootstrap() -> None:
    assert wilson(0, 10)["low"] == 0.0 and 0.0 < wilson(0, 10)["high"] < 0.35
    half = wilson(50, 100)
    assert half["value"] == 0.5 and half["low"] == pytest.approx(0.4038, abs=1e-4)
    values = [3.0, 9.0, 4.0, 12.0, 7.0]
    one, two = Bootstrap(5, seed=9).mean(values), Bootstrap(5, seed=9).mean(values)
    assert one == two and one["low"] < one["value"] < one["high"]
    ten, nine = Bootstrap(5, seed=10).picks, Bootstrap(5, seed=9).picks
    assert ten is not None and nine is not None
    assert not np.array_equal(ten, nine)  # the resamples follow the seed
    assert Bootstrap(2, seed=1).ratio([1.0, 2.0], [0.0, 0.0])["value"] is None  # nothing to divide by


def test_a_page_stuck_in_setup_is_stopped_and_counted_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    class Fidget:
        """A bot that draws its bases, then moves one man back and forth for ever."""

        def __init__(self, bot: Any) -> None:
            self.bot, self.step = bot, 0

        def choose(self, state: Any) -> dict[str, Any]:
            if state.phase != "positioning":
                return dict(self.bot.choose(state))
            self.step += 1
            man = state.living(state.actor)[0]
            return {
                "type": "position",
                "soldiers": [{"id": man.id, "x": man.x, "y": man.y + (-1) ** self.step}],
            }

    monkeypatch.setattr(
        page, "make_bot", lambda strength, seed, policy: Fidget(make_bot(strength, seed, policy))
    )
    config = small_config(games=2)
    records = run_pages(config, workers=1)
    assert [r.end for r in records] == ["setup_cap", "setup_cap"]
    assert all(r.turns == 0 and r.actions == SETUP_CAP and r.winner is None for r in records)
    report = build_report(config, records)
    assert report["endings"]["setup_cap"] == 2 and report["wins"]["none"] == 2
