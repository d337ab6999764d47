"""PROTOCOL.md, "Time, absence, rematch and phrases": `time_out` and `abandon`, the actions only the
server writes, end the page like `resign` with their own reason, and are refused once it is over."""

from __future__ import annotations

import json

import pytest

from dotfight.engine import IllegalAction, MalformedAction, RuleSet, State, apply, new_page
from dotfight.engine.actions import SERVER_ONLY_ACTIONS, Abandon, TimeOut, parse_action
from tests.engine.conftest import play_ready

ENDINGS = [("time_out", "time"), ("abandon", "abandoned")]


@pytest.mark.parametrize(("kind", "reason"), ENDINGS)
@pytest.mark.parametrize("who", ["blue", "red"])
def test_a_server_ending_ends_the_page_for_the_other_side(kind: str, reason: str, who: str) -> None:
    state = play_ready(RuleSet.preset("classic"))
    after, events = apply(state, who, {"type": kind})
    winner = "red" if who == "blue" else "blue"
    assert events == [
        {"type": "game_over", "winner": winner, "reason": reason},
        {"type": "phase", "phase": "over"},
    ]
    assert (after.phase, after.winner, after.end_reason) == ("over", winner, reason)
    assert after.version == state.version + 1


@pytest.mark.parametrize(("kind", "reason"), ENDINGS)
def test_a_server_ending_works_during_setup(kind: str, reason: str) -> None:
    after, _ = apply(new_page(RuleSet.preset("quick"), 3), "blue", {"type": kind})
    assert (after.winner, after.end_reason) == ("red", reason)


@pytest.mark.parametrize("kind", ["time_out", "abandon", "resign"])
@pytest.mark.parametrize("ending", ["time_out", "abandon", "resign"])
def test_nothing_ends_a_page_twice(kind: str, ending: str) -> None:
    over, _ = apply(play_ready(RuleSet.preset("quick")), "red", {"type": ending})
    with pytest.raises(IllegalAction) as refusal:
        apply(over, "blue", {"type": kind})
    assert refusal.value.code == "game_over"


def test_server_endings_parse_with_no_fields_and_are_named_as_server_only() -> None:
    state = new_page(RuleSet.preset("quick"), 1)
    assert parse_action(state, {"type": "time_out"}) == TimeOut()
    assert parse_action(state, {"type": "abandon"}) == Abandon()
    assert {"time_out", "abandon"} == SERVER_ONLY_ACTIONS
    with pytest.raises(MalformedAction):
        parse_action(state, {"type": "time_out", "side": "red"})


@pytest.mark.parametrize(("kind", "reason"), ENDINGS)
def test_a_page_ended_by_the_server_round_trips_through_its_private_json(kind: str, reason: str) -> None:
    """The codec knows the new reasons (before them, a stored page ended on time could not be read)."""
    over, _ = apply(play_ready(RuleSet.preset("quick")), "red", {"type": kind})
    again = State.from_json(json.loads(json.dumps(over.to_json())))
    assert again == over and again.end_reason == reason


def test_an_unknown_action_is_told_the_players_actions_not_the_servers() -> None:
    with pytest.raises(MalformedAction) as refusal:
        parse_action(new_page(RuleSet.preset("quick"), 1), {"type": "pass"})
    assert "resign" in refusal.value.message
    assert "time_out" not in refusal.value.message and "abandon" not in refusal.value.message
