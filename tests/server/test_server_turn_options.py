"""CONTRACTS.md C6 — turn options on the wire: snapshots (HTTP and the WebSocket `state`) carry
`options` = the engine's `turn_options(state)`; the last event of every events message sent (HTTP action
answers, WebSocket broadcasts and catch-ups) carries the options of the page after it — also after a
flick that keeps the turn (a bonus flick, a chain's link) and a send; the stored log is untouched."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient
from server_testkit import simple_action

from dotfight.engine import Replay, RuleSet, State, apply, new_page, turn_options
from tests.support.turn_keeping import KINDS, first_move_keeping_the_turn

SEED = "c6c6c6c6c6c6c6c6"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def local_page(client: TestClient) -> tuple[dict[str, Any], State]:
    """A local Quick page with a known seed, and the engine's own page beside it."""
    response = client.post("/api/pages", json={"preset": "quick", "mode": "local", "seed": SEED})
    assert response.status_code == 201
    page: dict[str, Any] = response.json()
    return page, new_page(RuleSet.from_json(page["snapshot"]["rules"]), int(SEED, 16))


def step(client: TestClient, page: dict[str, Any], state: State) -> tuple[list[dict[str, Any]], State]:
    """Makes one simple move over HTTP; returns the events answered and the engine's page after it."""
    action = simple_action(state.snapshot())
    body = {"action": action, "version": state.version}
    response = client.post(
        f"/api/pages/{page['id']}/actions", json=body, headers=bearer(page["seats"]["blue"])
    )
    assert response.status_code == 200, response.text
    after, _ = apply(state, state.actor or "blue", action)
    events: list[dict[str, Any]] = response.json()["events"]
    return events, after


def the_last_event_carries_options(events: list[dict[str, Any]], state: State) -> None:
    """The message's last event carries the options of the page after it; no other event carries any."""
    assert events and events[-1]["options"] == turn_options(state)
    assert all("options" not in event for event in events[:-1])
    options = events[-1]["options"]
    assert (options is None) == (state.phase != "play")
    if options is not None:
        assert options["side"] == state.turn.side  # type: ignore[union-attr]


def test_snapshots_and_action_answers_carry_the_engines_turn_options_and_the_log_stays_as_written(
    client: TestClient,
) -> None:
    page, state = local_page(client)
    assert page["snapshot"]["options"] is None  # a blank page: nobody is in play
    turns = 0
    while state.phase != "over" and state.version < 60:
        events, state = step(client, page, state)
        the_last_event_carries_options(events, state)
        turns += sum(event["type"] == "turn" for event in events)
        snapshot = client.get(f"/api/pages/{page['id']}").json()
        assert snapshot["options"] == turn_options(state)
        assert (snapshot["options"] is None) == (state.phase != "play")
    assert turns >= 10

    log = client.get(f"/api/pages/{page['id']}/log").json()
    assert "options" not in json.dumps(log)
    replay = Replay(
        RuleSet.from_json(log["rules"]),
        int(SEED, 16),
        [{"side": entry["side"], "action": entry["action"]} for entry in log["entries"]],
    )
    # As the engine wrote it, but for the cross's colour every crossed_out names on the way out.
    logged = [entry["events"] for entry in log["entries"]]
    crosses = [event for events in logged for event in events if event["type"] == "crossed_out"]
    assert crosses and all(event.pop("side") in ("blue", "red") for event in crosses)
    assert logged == json.loads(json.dumps(replay.events))


def test_the_options_follow_a_chain_a_send_and_the_end_of_the_page(client: TestClient) -> None:
    page, state = local_page(client)
    for _ in range(3):  # quick setup, both ready
        _, state = step(client, page, state)
    options = client.get(f"/api/pages/{page['id']}").json()["options"]
    assert options["side"] == "blue" and options["kinds"] == ["snipe", "lunge"] and options["chain"] is None
    assert options["send"] is not None and not options["can_stop"]
    send_from, send_to = next((a, bs[0]) for a, bs in options["send"]["from"].items() if bs)
    garrison = [s for s in state.soldiers if s.side == "blue" and state.base(send_from).contains(s.x, s.y)]
    body = {
        "action": {"type": "send", "from": send_from, "to": send_to, "soldiers": [garrison[0].id]},
        "version": 3,
    }
    response = client.post(
        f"/api/pages/{page['id']}/actions", json=body, headers=bearer(page["seats"]["blue"])
    )
    assert response.status_code == 200, response.text
    after = client.get(f"/api/pages/{page['id']}").json()["options"]
    assert after["send"] is None and after["side"] == "blue"  # one send a turn
    resign = {"action": {"type": "resign"}, "version": 4}
    response = client.post(
        f"/api/pages/{page['id']}/actions", json=resign, headers=bearer(page["seats"]["blue"])
    )
    assert response.status_code == 200
    assert client.get(f"/api/pages/{page['id']}").json()["options"] is None


def test_the_websocket_sends_options_in_its_state_its_broadcasts_and_its_catch_up(client: TestClient) -> None:
    page, state = local_page(client)
    for _ in range(3):
        _, state = step(client, page, state)
    with client.websocket_connect(f"/api/pages/{page['id']}/ws") as watcher:
        watcher.send_json({"type": "hello", "version": 0})
        hello = watcher.receive_json()
        assert hello["type"] == "state" and hello["snapshot"]["options"] == turn_options(state)
        seen_turns = 0
        for _ in range(6):
            version = state.version
            _, state = step(client, page, state)
            message = watcher.receive_json()
            while message["type"] == "presence":
                message = watcher.receive_json()
            assert message["type"] == "events" and message["version"] == version + 1
            the_last_event_carries_options(message["events"], state)
            seen_turns += sum(event["type"] == "turn" for event in message["events"])
        assert seen_turns >= 3

    # A client coming back at version 3 hears every event since; the last carries today's options.
    with client.websocket_connect(f"/api/pages/{page['id']}/ws") as late:
        late.send_json({"type": "hello", "version": 3})
        message = late.receive_json()
        assert message["type"] == "events" and message["version"] == state.version
        the_last_event_carries_options(message["events"], state)


def test_a_repeated_move_is_answered_as_first_while_the_page_stands_and_as_stored_after(
    client: TestClient,
) -> None:
    page, state = local_page(client)
    for _ in range(3):
        _, state = step(client, page, state)
    url, headers = f"/api/pages/{page['id']}/actions", bearer(page["seats"]["blue"])
    body = {"action": simple_action(state.snapshot()), "version": state.version, "move_id": "m-1"}
    first = client.post(url, json=body, headers=headers).json()
    assert first["events"][-1]["options"]["side"] == "red"  # a snipe passes the turn to red
    assert client.post(url, json=body, headers=headers).json() == first
    state, _ = apply(state, "blue", body["action"])
    _, state = step(client, page, state)  # the page moves on
    later = client.post(url, json=body, headers=headers).json()
    assert later["version"] == first["version"] and all("options" not in event for event in later["events"])
    stored = client.get(f"/api/pages/{page['id']}/log").json()["entries"][first["version"] - 1]["events"]
    assert later["events"] == stored


@pytest.mark.parametrize("kind", KINDS)
def test_every_message_carries_the_options_after_a_move_that_keeps_the_turn(
    client: TestClient, kind: str
) -> None:
    """Over HTTP and the WebSocket, every message's last event carries the options of the page after it,
    along a page up to and including a bonus flick, a chain's link or a send (the turn kept)."""
    seed, moves, move, _ = first_move_keeping_the_turn(kind)
    created = client.post("/api/pages", json={"preset": "quick", "mode": "local", "seed": f"{seed:032x}"})
    assert created.status_code == 201
    page = created.json()
    state = new_page(RuleSet.preset("quick"), seed)
    with client.websocket_connect(f"/api/pages/{page['id']}/ws") as watcher:
        watcher.send_json({"type": "hello", "version": 0})
        assert watcher.receive_json()["type"] == "state"
        for side, action in [*moves, move]:
            body = {"action": action, "version": state.version}
            answer = client.post(
                f"/api/pages/{page['id']}/actions", json=body, headers=bearer(page["seats"][side])
            )
            assert answer.status_code == 200, answer.text
            state, _ = apply(state, side, action)
            events = answer.json()["events"]
            the_last_event_carries_options(events, state)
            message = watcher.receive_json()
            while message["type"] == "presence":
                message = watcher.receive_json()
            assert message == {"type": "events", "version": state.version, "events": events}
    assert not any(event["type"] == "turn" for event in events) and state.phase == "play"
