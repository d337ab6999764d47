"""Golden pages: stored logs must replay to exactly the stored events and final state.

This is the guarantee that a saved page opens and replays after the code changes. The files are made by
`python3 -m tests.engine.make_golden`, never by a test.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from dotfight.engine import EngineError, Replay, RuleSet, State
from dotfight.engine.rules import legacy_values

GOLDEN_DIR = Path(__file__).parent / "golden"
GOLDEN_FILES = sorted(GOLDEN_DIR.glob("*.json"))


def load(path: Path) -> dict[str, Any]:
    record: dict[str, Any] = json.loads(path.read_text())
    assert record["format"] == 1
    return record


def as_json(value: Any) -> Any:
    """The value as a JSON reader sees it (tuples become lists), the form pages are stored in."""
    return json.loads(json.dumps(value, allow_nan=False))


def as_stored(state: State, record: dict[str, Any]) -> Any:
    """The state's JSON as the golden file holds it: the rules fields added since the file was made are
    checked to hold their legacy values, then left out, and everything else must match exactly."""
    data = as_json(state.to_json())
    stored_names = set(record["rules"])
    added = {name: value for name, value in data["rules"].items() if name not in stored_names}
    assert added == as_json(legacy_values(record["rules"]["reach_curve"]))
    data["rules"] = {name: value for name, value in data["rules"].items() if name in stored_names}
    return data


def replay_of(record: dict[str, Any], actions: list[dict[str, Any]] | None = None) -> Replay:
    rules = RuleSet.from_json(record["rules"])
    return Replay(rules, int(record["seed"], 16), record["actions"] if actions is None else actions)


def test_one_golden_page_per_preset() -> None:
    names = {path.stem for path in GOLDEN_FILES}
    assert {"classic", "quick", "dawood", "custom"} <= names


def test_golden_pages_between_them_reach_every_rule() -> None:
    """A regenerated set must still hold the guarantee for every kind of event a saved page can have."""
    seen: set[str] = set()
    for path in GOLDEN_FILES:
        for events in load(path)["events"]:
            for event in events:
                seen.add(event["type"])
                for key in ("cause", "reason"):
                    if key in event:
                        seen.add(f"{event['type']}:{event[key]}")
                if event["type"] == "turn" and event["last_stand"]:
                    seen.add("last_stand")
    expected = {
        "base_drawn", "positioned", "phase", "ink", "wall", "landed", "send", "arrived", "turn",
        "crossed_out:snipe", "crossed_out:lunge", "crossed_out:shot", "crossed_out:off_page",
        "bonus:two_with_one_bullet", "bonus:lunge_again", "game_over:all_crossed_out", "last_stand",
    }  # fmt: skip
    assert expected <= seen, sorted(expected - seen)


@pytest.mark.parametrize("path", GOLDEN_FILES, ids=lambda p: p.stem)
def test_golden_page_replays_exactly(path: Path) -> None:
    record = load(path)
    replay = replay_of(record)
    assert replay.error is None
    assert replay.valid == len(record["actions"])
    assert as_json(replay.events) == record["events"]
    assert as_stored(replay.state, record) == record["final"]
    assert replay.state.phase == "over"


@pytest.mark.parametrize("path", GOLDEN_FILES, ids=lambda p: p.stem)
def test_golden_final_state_opens_from_its_snapshot(path: Path) -> None:
    record = load(path)
    state = State.from_json(record["final"])
    assert as_stored(state, record) == record["final"]
    assert state == replay_of(record).state


def corrupt(actions: list[dict[str, Any]], at: int) -> list[dict[str, Any]]:
    """The log with one action at `at` made unacceptable: another soldier's id that does not exist."""
    broken = copy.deepcopy(actions)
    broken[at]["action"] = {"type": "flick", "soldier": "b99s99", "kind": "snipe", "vector": [0.0, 100.0]}
    return broken


def test_replay_refuses_a_log_entry_that_is_not_side_and_action() -> None:
    record = load(GOLDEN_DIR / "classic.json")
    actions = copy.deepcopy(record["actions"])
    at = len(actions) // 2
    actions[at] = {"action": actions[at]["action"]}  # the seat is missing
    replay = replay_of(record, actions)
    assert replay.valid == at
    assert replay.error is not None and replay.error.code == "bad_request"


@pytest.mark.parametrize("where", [0.0, 0.5, 1.0])
def test_replay_keeps_the_valid_prefix_of_a_corrupted_log(where: float) -> None:
    record = load(GOLDEN_DIR / "quick.json")
    actions = record["actions"]
    at = min(int(where * len(actions)), len(actions) - 1)
    replay = replay_of(record, corrupt(actions, at))
    assert replay.valid == at and replay.state.version == at
    assert isinstance(replay.error, EngineError)
    assert replay.error.code == "bad_request"
    assert as_json(replay.events) == record["events"][:at]
    assert replay.state == replay_of(record, actions[:at]).state


def test_replay_reports_the_first_of_several_failures() -> None:
    record = load(GOLDEN_DIR / "custom.json")
    actions = copy.deepcopy(record["actions"])
    # Resigning is allowed to either seat at any time, so the wrong seat must try something else.
    first = next(
        i for i in range(len(actions) // 3, len(actions)) if actions[i]["action"]["type"] != "resign"
    )
    second = max(first + 1, 2 * len(actions) // 3)
    # The first failure is a well-formed action by the wrong seat; the second would be junk.
    actions[first]["side"] = "red" if actions[first]["side"] == "blue" else "blue"
    actions = corrupt(actions, second)
    replay = replay_of(record, actions)
    assert replay.valid == first
    assert replay.error is not None and replay.error.code == "not_your_turn"
    assert as_json(replay.events) == record["events"][:first]
