"""The calibration fields (CONTRACTS.md C2): the spread formula, the shake reading, and legacy values for
stored rules that predate them, whatever the presets' defaults become."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dotfight.engine import (
    PRESETS,
    Replay,
    RuleSet,
    RuleSetError,
    apply,
    check_new_page,
    new_page,
    resolve_lunge,
)
from dotfight.engine.flick import man_shake, wall_shake, wild_spread
from dotfight.engine.rules import legacy_values

GOLDEN_DIR = Path(__file__).parent / "golden"
CALIBRATED = {"wildness_soft": 0.03, "wildness_curve": 1.0, "shake_sigmas": 3.0}
powers = st.floats(min_value=0.0, max_value=1.0)


@pytest.fixture
def calibrated_presets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every preset with new calibration defaults, as the lab's calibration will set them."""
    for name, rules in list(PRESETS.items()):
        monkeypatch.setitem(PRESETS, name, rules.replace(**CALIBRATED))


@st.composite
def calibrations(draw: st.DrawFn) -> RuleSet:
    wildness = draw(st.floats(min_value=0.0, max_value=math.pi))
    return RuleSet.preset(
        "classic",
        wildness=wildness,
        wildness_soft=draw(st.floats(min_value=0.0, max_value=wildness)),
        wildness_curve=draw(st.floats(min_value=0.01, max_value=20.0)),
        reach_curve=draw(st.floats(min_value=0.01, max_value=20.0)),
    )


def test_every_preset_holds_the_labs_calibration() -> None:
    # docs/RULES-NOTES.md, "Calibration": the same four numbers for Quick, Classic, Dawood and Custom.
    for rules in PRESETS.values():
        assert (rules.wildness, rules.wildness_soft, rules.wildness_curve, rules.shake_sigmas) == (
            0.06,
            0.0,
            3.0,
            3.0,
        )


def test_stored_rules_without_the_fields_take_their_legacy_values(calibrated_presets: None) -> None:
    made = RuleSet.preset("quick")
    assert (made.wildness_soft, made.wildness_curve, made.shake_sigmas) == (0.03, 1.0, 3.0)
    stored = {k: v for k, v in made.to_json().items() if k not in CALIBRATED}
    loaded = RuleSet.from_json({**stored, "reach_curve": 2.5})
    assert (loaded.wildness_soft, loaded.wildness_curve, loaded.shake_sigmas) == (0.0, 2.5, 1.0)
    # Without a stored reach curve either, the legacy wildness curve is the preset's reach curve.
    assert RuleSet.from_json({"preset": "quick"}).wildness_curve == made.reach_curve
    # Stored fields are taken as stored.
    assert RuleSet.from_json(made.to_json()) == made
    assert RuleSet.from_json({"preset": "quick", "shake_sigmas": 2}).shake_sigmas == 2.0


@pytest.mark.parametrize("path", sorted(GOLDEN_DIR.glob("*.json")), ids=lambda p: p.stem)
def test_golden_pages_replay_exactly_after_the_presets_change(calibrated_presets: None, path: Path) -> None:
    record = json.loads(path.read_text())
    assert not set(CALIBRATED) & set(record["rules"])
    replay = Replay(RuleSet.from_json(record["rules"]), int(record["seed"], 16), record["actions"])
    assert replay.error is None
    assert json.loads(json.dumps(replay.events)) == record["events"]


@given(calibrations(), powers, powers)
def test_the_spread_grows_with_power_from_soft_to_wildness(rules: RuleSet, a: float, b: float) -> None:
    low, high = sorted((a, b))
    assert wild_spread(rules, low) <= wild_spread(rules, high)
    assert wild_spread(rules, 1.0) == rules.wildness
    assert wild_spread(rules, 0.0) == rules.wildness_soft


@given(calibrations(), powers)
def test_legacy_values_give_exactly_yesterdays_spread(rules: RuleSet, t: float) -> None:
    legacy = rules.replace(**legacy_values(rules.reach_curve))
    assert wild_spread(legacy, t) == rules.wildness * math.pow(t, rules.reach_curve)


@given(powers, st.floats(min_value=1.0, max_value=3.0))
def test_shake_sigmas_divide_the_books_degrees(fullness: float, sigmas: float) -> None:
    book = RuleSet.preset("classic", shake_sigmas=1)
    legacy = book.shake_empty + (book.shake_full - book.shake_empty) * fullness
    assert wall_shake(book, fullness) == legacy  # one spread: exactly yesterday's number
    read = book.replace(shake_sigmas=sigmas)
    assert wall_shake(read, fullness) == pytest.approx(legacy / sigmas)
    assert man_shake(read) == pytest.approx(book.shake_man / sigmas)


def test_a_lunger_is_shaken_by_a_third_when_degrees_are_the_largest_deflection() -> None:
    def first_shake(sigmas: float) -> float:
        page = new_page(RuleSet.preset("quick", wildness=0, shake_sigmas=sigmas), seed=7)
        for side, kind in [("blue", "quick_setup"), ("blue", "ready"), ("red", "ready")]:
            page, _ = apply(page, side, {"type": kind})
        _, events = resolve_lunge(page, "b3s1", (0, -300))
        walls = [e for e in events if e["type"] == "wall" and e["shake"] != 0.0]
        assert walls and walls[0]["base"] == "b4"  # the enemy wall, met on the same line both times
        return float(walls[0]["shake"])

    assert first_shake(3.0) == pytest.approx(first_shake(1.0) / 3)


def test_new_pages_refuse_a_dot_too_small_for_its_bases_but_stored_rules_load() -> None:
    for rules in PRESETS.values():
        check_new_page(rules)
    check_new_page(RuleSet.preset("custom", dot_radius=1, base_radius_max=100))
    stored = RuleSet.from_json({"preset": "quick", "dot_radius": 0.001})  # a stored page still loads
    with pytest.raises(RuleSetError) as refusal:
        check_new_page(stored)
    assert (refusal.value.code, refusal.value.reason, refusal.value.field) == (
        "bad_request",
        "bad_rules",
        "dot_radius",
    )
