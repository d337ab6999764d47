"""The RuleSet: every number of RULES.md by name, the presets, overrides, exact JSON, refusals."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from dotfight.engine import PRESETS, RuleSet, RuleSetError

RULE_BOOK = {
    "page_width": 1000, "page_height": 1400, "dot_radius": 7, "outside_margin": 20, "base_radius_min": 40,
    "base_radius_max": 100, "base_gap": 30, "bases_per_side": 4, "soldiers_per_base": 8, "pull_max": 300,
    "reach_min_frac": 0.2, "reach_curve": 2, "wall_loss_empty": 0.03,
    "wall_loss_full": 0.85, "man_loss": 0.05, "shake_empty": 0.0175, "shake_full": 0.995, "shake_man": 0.04,
    "lunge_link_shake": 0.05,
    "send_max": 5, "last_stand_at": 4, "last_stand_flicks": 2, "last_stand_steady": 0.5,
}  # fmt: skip
# Not the book's numbers but how some of them become a draw (docs/RULES-NOTES.md, Calibration).
CALIBRATION = {"wildness", "wildness_soft", "wildness_curve", "shake_sigmas"}


def test_classic_holds_every_number_of_the_rule_book_by_its_name() -> None:
    rules = RuleSet.preset("classic")
    data = rules.to_json()
    assert set(data) == {*RULE_BOOK, *CALIBRATION, "preset"}
    for name, value in RULE_BOOK.items():
        assert data[name] == value and getattr(rules, name) == value
    assert rules.preset == "classic" and rules == RuleSet() and PRESETS["classic"] == rules
    assert rules.diagonal == pytest.approx(1720.465, abs=1e-3)


@pytest.mark.parametrize(
    ("name", "bases", "soldiers"), [("classic", 4, 8), ("quick", 3, 8), ("dawood", 5, 10), ("custom", 4, 8)]
)
def test_presets(name: str, bases: int, soldiers: int) -> None:
    rules = RuleSet.preset(name)
    assert (rules.preset, rules.bases_per_side, rules.soldiers_per_base) == (name, bases, soldiers)


def test_any_field_can_be_overridden_and_round_trips_exactly_through_json() -> None:
    rules = RuleSet.preset(
        "custom",
        bases_per_side=7,
        soldiers_per_base=13,
        wildness=0.123456789012345,
        wall_loss_full=1,
        page_width=1200,
    )
    assert rules.wall_loss_full == 1.0 and isinstance(rules.wall_loss_full, float)
    assert isinstance(rules.bases_per_side, int)
    text = json.dumps(rules.to_json())
    again = RuleSet.from_json(json.loads(text))
    assert again == rules and json.dumps(again.to_json()) == text
    assert rules.replace(wildness=0.2).wildness == 0.2 and rules.wildness == 0.123456789012345


def test_from_json_fills_missing_fields_from_the_named_preset() -> None:
    loaded = RuleSet.from_json({"preset": "dawood", "wildness": 0.2}).to_json()
    made = RuleSet.preset("dawood", wildness=0.2).to_json()
    assert {k: v for k, v in loaded.items() if k not in CALIBRATION} == {
        k: v for k, v in made.items() if k not in CALIBRATION
    }


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"dot_radius": -1}, "dot_radius"),
        ({"base_radius_min": 0}, "base_radius_min"),
        ({"wall_loss_full": 1.5}, "wall_loss_full"),
        ({"man_loss": -0.1}, "man_loss"),
        ({"wildness": math.nan}, "wildness"),
        ({"pull_max": math.inf}, "pull_max"),
        ({"pull_max": 10**400}, "pull_max"),
        ({"send_max": True}, "send_max"),
        ({"bases_per_side": 2.5}, "bases_per_side"),
        ({"bases_per_side": 9}, "bases_per_side"),
        ({"bases_per_side": 0}, "bases_per_side"),
        ({"soldiers_per_base": 21}, "soldiers_per_base"),
        ({"page_width": "wide"}, "page_width"),
        ({"frobnicate": 1}, "frobnicate"),
        ({"preset": "huge"}, "preset"),
        ({"base_radius_min": 120}, "base_radius_min"),
        ({"soldiers_per_base": 20, "base_radius_min": 30}, "soldiers_per_base"),
        ({"reach_min_frac": 0}, "reach_min_frac"),
        ({"last_stand_flicks": 0}, "last_stand_flicks"),
        ({"last_stand_flicks": 11}, "last_stand_flicks"),
        ({"page_width": 1e300}, "page_width"),
        ({"page_height": 100_001}, "page_height"),
        ({"pull_max": 1e6}, "pull_max"),
        ({"base_gap": 5000}, "base_gap"),
        ({"wildness_soft": -0.01}, "wildness_soft"),
        ({"wildness_soft": 0.2, "wildness": 0.1}, "wildness_soft"),
        ({"wildness_curve": 0}, "wildness_curve"),
        ({"wildness_curve": math.inf}, "wildness_curve"),
        ({"shake_sigmas": 0.5}, "shake_sigmas"),
        ({"shake_sigmas": 3.5}, "shake_sigmas"),
    ],
)
def test_nonsense_is_refused_naming_the_field_and_value(overrides: dict[str, Any], field: str) -> None:
    with pytest.raises(RuleSetError) as refusal:
        RuleSet.preset("classic", **overrides)
    assert isinstance(refusal.value, ValueError)
    assert refusal.value.field == field and field in str(refusal.value)
    assert refusal.value.code == "bad_request" and refusal.value.reason == "bad_rules"


def test_from_json_refuses_what_is_not_a_rule_object() -> None:
    with pytest.raises(RuleSetError):
        RuleSet.from_json([1, 2])
    with pytest.raises(RuleSetError):
        RuleSet.from_json({"preset": 3})


def test_custom_accepts_the_whole_range_of_army_sizes() -> None:
    for bases in (1, 8):
        for soldiers in (1, 20):
            rules = RuleSet.preset("custom", bases_per_side=bases, soldiers_per_base=soldiers)
            assert (rules.bases_per_side, rules.soldiers_per_base) == (bases, soldiers)
