"""Malformed input (bad_request) is told apart from well-formed but forbidden actions."""

from __future__ import annotations

import math
from typing import Any

import pytest

from dotfight.engine import EngineError, IllegalAction, MalformedAction, RuleSet, State, apply
from tests.engine.conftest import Page, flick, play_ready


@pytest.fixture(scope="module")
def play() -> State:
    return play_ready(RuleSet.preset("classic"))


FLICK = {"type": "flick", "soldier": "b1s1", "kind": "snipe", "vector": [0, -100]}


@pytest.mark.parametrize(
    ("action", "reason"),
    [
        ("flick", "not_an_object"),
        ({"kind": "snipe"}, "unknown_action"),
        ({"type": "teleport"}, "unknown_action"),
        ({"type": 7}, "unknown_action"),
        ({**FLICK, "extra": 1}, "unknown_field"),
        ({"type": "flick", "soldier": "b1s1", "kind": "snipe"}, "missing_field"),
        ({**FLICK, "soldier": "b99s1"}, "unknown_soldier"),
        ({**FLICK, "soldier": 1}, "bad_id"),
        ({**FLICK, "kind": "punch"}, "unknown_kind"),
        ({**FLICK, "vector": [True, -100]}, "not_a_number"),
        ({**FLICK, "vector": ["0", -100]}, "not_a_number"),
        ({**FLICK, "vector": [math.nan, -100]}, "not_finite"),
        ({**FLICK, "vector": [0, -math.inf]}, "not_finite"),
        ({**FLICK, "vector": [10**400, 0]}, "not_finite"),
        ({**FLICK, "vector": [0, -1721]}, "out_of_range"),
        ({**FLICK, "vector": [0]}, "bad_vector"),
        ({**FLICK, "vector": {"dx": 0, "dy": 1}}, "bad_vector"),
        ({"type": "send", "from": "b1", "to": "b9", "soldiers": ["b1s1"]}, "unknown_base"),
        ({"type": "send", "from": "b1", "to": "b3", "soldiers": "b1s1"}, "bad_list"),
        ({"type": "send", "from": "b1", "to": "b3", "soldiers": ["b1s1", "b1s1"]}, "duplicate_soldier"),
        ({"type": "draw_base", "x": 1e9, "y": 1000, "r": 50}, "out_of_range"),
        ({"type": "draw_base", "x": 500, "y": 1000, "r": False}, "not_a_number"),
        ({"type": "position", "soldiers": [{"id": "b1s1", "x": 1, "y": 2, "z": 3}]}, "unknown_field"),
        ({"type": "position", "soldiers": [["b1s1", 1, 2]]}, "bad_position"),
        ({"type": "stop", "now": True}, "unknown_field"),
    ],
)
def test_malformed_input_is_a_bad_request(play: State, action: Any, reason: str) -> None:
    with pytest.raises(MalformedAction) as refusal:
        apply(play, "blue", action)
    assert refusal.value.code == "bad_request" and refusal.value.reason == reason
    assert isinstance(refusal.value, EngineError) and isinstance(refusal.value, ValueError)


@pytest.mark.parametrize("side", ["green", None, 0, "Blue"])
def test_an_unknown_side_is_a_bad_request(play: State, side: Any) -> None:
    with pytest.raises(MalformedAction) as refusal:
        apply(play, side, {"type": "resign"})
    assert refusal.value.reason == "bad_side"


def test_malformed_is_judged_before_the_turn(play: State) -> None:
    with pytest.raises(MalformedAction):
        apply(play, "red", {**FLICK, "vector": [math.nan, 0]})


@pytest.mark.parametrize(
    ("side", "action", "code", "reason"),
    [
        (
            "red",
            {"type": "flick", "soldier": "b2s1", "kind": "snipe", "vector": [0, 100]},
            "not_your_turn",
            "not_your_turn",
        ),
        ("blue", {**FLICK, "soldier": "b2s1"}, "illegal_action", "not_your_soldier"),
        ("blue", {**FLICK, "vector": [0.5, 0.5]}, "illegal_action", "vector_too_short"),
        ("blue", {"type": "stop"}, "illegal_action", "stop_before_flick"),
        ("blue", {"type": "draw_base", "x": 500, "y": 1000, "r": 50}, "illegal_action", "wrong_phase"),
        ("blue", {"type": "quick_setup"}, "illegal_action", "wrong_phase"),
        ("blue", {"type": "ready"}, "illegal_action", "wrong_phase"),
    ],
)
def test_forbidden_actions_are_illegal_with_a_stable_code(
    play: State, side: str, action: dict[str, Any], code: str, reason: str
) -> None:
    before = play.to_json()
    with pytest.raises(IllegalAction) as refusal:
        apply(play, side, action)
    assert (refusal.value.code, refusal.value.reason) == (code, reason)
    assert refusal.value.message and play.to_json() == before


def test_a_dead_soldier_cannot_flick(page: Page) -> None:
    page.man("blue", 500, 1300, "gun")
    page.man("red", 500, 1000, "target")
    page.man("red", 900, 100, "spare")
    state, _ = flick(page.build(), "blue", "gun", "snipe", (0, -300))
    assert not state.soldier("target").alive and state.actor == "red"
    with pytest.raises(IllegalAction) as refusal:
        flick(state, "red", "target", "snipe", (0, 300))
    assert refusal.value.reason == "soldier_dead"


def test_a_vector_of_exactly_one_unit_is_allowed(play: State) -> None:
    after, _ = apply(play, "blue", {**FLICK, "vector": [0.6, -0.8]})
    assert after.version == play.version + 1


@pytest.mark.parametrize(
    "action",
    [
        {**FLICK, "soldier": "s" * 100_000},
        {**FLICK, "kind": "k" * 100_000},
        {**FLICK, "vector": list(range(50_000))},
        {"type": "position", "soldiers": [{"id": "b1s1", "x": "9" * 100_000, "y": 0}]},
    ],
)
def test_a_refusal_quotes_only_a_short_piece_of_huge_input(play: State, action: dict[str, Any]) -> None:
    with pytest.raises(MalformedAction) as refused:
        apply(play, play.actor or "blue", action)
    assert len(refused.value.message) < 200
    assert "..." in refused.value.message
