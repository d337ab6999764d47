"""Determinism: ids, the snapshot, exact JSON of the state, Replay, and the `dotfight replay` command."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from dotfight import replay_cli
from dotfight.engine import Replay, RuleSet, State, apply, new_page
from dotfight.engine.values import Event


def _play(
    rules: RuleSet, seed: int, moves: int = 30
) -> tuple[list[dict[str, Any]], State, list[list[Event]]]:
    """Plays a page with a fixed little script: every turn the first flickable soldier snipes or lunges
    at the enemy's first living soldier; sends once in a while."""
    log: list[dict[str, Any]] = []
    all_events: list[list[Event]] = []
    state = new_page(rules, seed)

    def do(side: str, action: dict[str, Any]) -> None:
        nonlocal state
        state, events = apply(state, side, action)
        log.append({"side": side, "action": action})
        all_events.append(events)

    do("blue", {"type": "quick_setup"})
    do("blue", {"type": "ready"})
    do("red", {"type": "ready"})
    for move in range(moves):
        if state.phase == "over":
            break
        side = state.actor
        assert side is not None
        enemy = next(s for s in state.soldiers if s.alive and s.side != side and not s.on_road)
        mover = state.soldier(state.flickable(side)[0])
        kind = "lunge" if move % 3 == 2 or (state.turn and state.turn.chain) else "snipe"
        do(
            side,
            {
                "type": "flick",
                "soldier": mover.id,
                "kind": kind,
                "vector": [enemy.x - mover.x, enemy.y - mover.y],
            },
        )
    return log, state, all_events


def test_a_page_rebuilt_from_its_log_is_identical() -> None:
    rules = RuleSet.preset("quick")
    log, final, events = _play(rules, 77)
    replay = Replay(rules, 77, log)
    assert replay.error is None and replay.valid == len(log)
    assert replay.state.to_json() == final.to_json()
    assert replay.events == events
    assert replay.states(0).version == 0 and replay.states(len(log)).to_json() == final.to_json()


def test_replay_keeps_the_valid_prefix_and_reports_the_first_failure() -> None:
    rules = RuleSet.preset("classic")
    log, _, _ = _play(rules, 5, moves=6)
    broken = [*log[:4], {"side": "red", "action": {"type": "draw_base", "x": 1, "y": 1, "r": 50}}, *log[4:]]
    replay = Replay(rules, 5, broken)
    assert replay.valid == 4 and replay.error is not None and replay.error.reason == "wrong_phase"
    assert replay.state.to_json() == Replay(rules, 5, log[:4]).state.to_json()
    junk = Replay(rules, 5, [*log[:2], "junk"])
    assert junk.valid == 2 and junk.error is not None and junk.error.code == "bad_request"


def test_the_state_round_trips_exactly_through_json() -> None:
    _, final, _ = _play(RuleSet.preset("dawood"), 2**128 - 1, moves=12)
    text = json.dumps(final.to_json(), allow_nan=False)
    again = State.from_json(json.loads(text))
    assert again == final and json.dumps(again.to_json(), allow_nan=False) == text
    assert again.to_json()["seed"] == "f" * 32


def test_the_snapshot_is_public_and_shaped_as_the_protocol_says() -> None:
    _, final, _ = _play(RuleSet.preset("classic"), 8, moves=4)
    snap = final.snapshot()
    assert "seed" not in snap and "rng" not in snap
    assert set(snap) == {
        "version",
        "phase",
        "rules",
        "side_to_act",
        "turn",
        "bases",
        "soldiers",
        "ink",
        "convoys",
        "setup",
        "winner",
        "end_reason",
    }
    assert snap["version"] == final.version == 3 + 4
    assert snap["rules"] == final.rules.to_json()
    assert set(snap["soldiers"][0]) == {"id", "side", "x", "y", "alive", "on_road", "cross"}
    assert [i["points"] for i in snap["ink"]] == [i.to_json()["points"] for i in final.ink]


def test_ids_are_deterministic() -> None:
    _, final, _ = _play(RuleSet.preset("quick"), 1, moves=0)
    assert [b.id for b in final.bases] == ["b1", "b2", "b3", "b4", "b5", "b6"]
    assert [s.id for s in final.soldiers[:9]] == [f"b1s{k}" for k in range(1, 9)] + ["b2s1"]


def test_another_generator_gives_another_page_but_the_same_position() -> None:
    _, state, _ = _play(RuleSet.preset("classic"), 3, moves=0)
    other = state.with_rng(4)
    assert other.seed == 4 and other.rng == 0 and other.snapshot() == state.snapshot()
    with pytest.raises(ValueError):
        state.with_rng(-1)
    with pytest.raises(ValueError):
        new_page(RuleSet(), 2**128)


def test_the_replay_command_prints_events_and_the_final_snapshot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = RuleSet.preset("quick")
    log, final, events = _play(rules, 12, moves=5)
    path = tmp_path / "page.json"
    path.write_text(json.dumps({"rules": rules.to_json(), "seed": f"{12:032x}", "actions": log}))
    parser = argparse.ArgumentParser()
    replay_cli.add_arguments(parser)
    assert replay_cli.run(parser.parse_args([str(path)])) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert json.loads(lines[0]) == {"version": 1, "events": events[0]}
    assert json.loads("\n".join(lines[len(events) :])) == final.snapshot()

    path.write_text(
        json.dumps({"rules": rules.to_json(), "seed": 12, "actions": [*log[:3], {"side": "red"}]})
    )
    assert replay_cli.run(parser.parse_args([str(path), "--show", "snapshot"])) == 1
    assert "action 4 refused" in capsys.readouterr().err
    path.write_text("[1, 2")
    assert replay_cli.run(parser.parse_args([str(path)])) == 2
