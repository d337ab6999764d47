"""Issue 20, item 5: whose cross it is reaches the browser with the `crossed_out` event on every road —
the live socket, the catch-up `events` message, the `POST …/actions` answer and the log — as the
engine's `Cross.side` of the crossed soldier, while the stored log stays as the engine wrote it."""

from __future__ import annotations

import json
import math
from typing import Any

import httpx
from websockets.sync.client import connect

from dotfight.engine import Replay, RuleSet, State, apply, new_page
from tests.support.pages import SETUP_MOVES

SEED = "5eed5eed5eed5eed"
# Frames a watcher may hear before the one awaited (presence comes and goes); bounds every wait.
MAX_FRAMES = 20


def crossing_flick(state: State) -> dict[str, Any]:
    """A full-power snipe of the side to act that crosses somebody out on this page (the engine's own
    replica of the server's page, same seed, tells)."""
    side = state.actor
    for shooter in state.soldiers:
        if shooter.side != side or not shooter.alive or shooter.on_road:
            continue
        for target in state.soldiers:
            if target.side == side or not target.alive:
                continue
            d = math.hypot(target.x - shooter.x, target.y - shooter.y) or 1.0
            vector = [round((target.x - shooter.x) / d * 900, 1), round((target.y - shooter.y) / d * 900, 1)]
            action = {"type": "flick", "soldier": shooter.id, "kind": "snipe", "vector": vector}
            _, events = apply(state, side, action)
            if any(event["type"] == "crossed_out" for event in events):
                return action
    raise AssertionError("no snipe of the side to act crosses anybody out")


def events_heard(socket: Any, version: int) -> list[dict[str, Any]]:
    """The events of the next `events` message at `version` on `socket` (other frames skipped)."""
    for _ in range(MAX_FRAMES):
        message = json.loads(socket.recv(timeout=10))
        if message["type"] == "events" and message["version"] == version:
            events: list[dict[str, Any]] = message["events"]
            return events
    raise AssertionError(f"no events message at version {version}")


def crosses(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [event for event in events if event["type"] == "crossed_out"]


def test_every_road_to_the_browser_names_the_cross_side_as_the_engine_knows_it(server: str) -> None:
    ws_base = server.replace("http://", "ws://")
    with httpx.Client(base_url=server, timeout=10) as http:
        created = http.post("/api/pages", json={"preset": "quick", "mode": "local", "seed": SEED}).json()
        page_id, token = created["id"], created["seats"]["blue"]
        state = new_page(RuleSet.from_json(created["snapshot"]["rules"]), int(SEED, 16))
        headers = {"Authorization": f"Bearer {token}"}

        def act(action: dict[str, Any]) -> list[dict[str, Any]]:
            nonlocal state
            body = {"action": action, "version": state.version}
            answer = http.post(f"/api/pages/{page_id}/actions", json=body, headers=headers)
            assert answer.status_code == 200, answer.text
            state, _ = apply(state, state.actor or "blue", action)
            events: list[dict[str, Any]] = answer.json()["events"]
            return events

        for _, action in SETUP_MOVES:
            act(action)
        before = state.version
        with connect(f"{ws_base}/api/pages/{page_id}/ws") as watcher:
            watcher.send(json.dumps({"type": "hello", "version": before}))
            answered = act(crossing_flick(state))
            live = events_heard(watcher, state.version)
        with connect(f"{ws_base}/api/pages/{page_id}/ws") as late:
            late.send(json.dumps({"type": "hello", "version": before}))
            caught_up = events_heard(late, state.version)
        log = http.get(f"/api/pages/{page_id}/log").json()

    logged = [event for entry in log["entries"] for event in entry["events"]]
    expected = [(s.id, s.cross.side) for s in state.soldiers if s.cross is not None]
    assert expected, "the flick crossed nobody out"
    for road, events in (("answer", answered), ("socket", live), ("catch-up", caught_up), ("log", logged)):
        assert [(e["soldier"], e.get("side")) for e in crosses(events)] == expected, road
    # The stored log is the engine's, unchanged: the side is added on the way out.
    stripped = [
        {k: v for k, v in e.items() if k != "side"} if e["type"] == "crossed_out" else e for e in logged
    ]
    actions = [{"side": entry["side"], "action": entry["action"]} for entry in log["entries"]]
    replayed = Replay(RuleSet.from_json(log["rules"]), int(SEED, 16), actions).events
    assert stripped == json.loads(json.dumps([event for events in replayed for event in events]))
    assert not any("side" in event for event in crosses(stripped))
