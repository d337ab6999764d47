"""The clock on the wire (issue 19, item 2): the snapshot's `clock` from the clock model wherever the
snapshot goes, `clock` in every socket `events` message and `POST …/actions` answer of a page with a
clock (none on a page without one), the summaries' deadline kept current by the moves, and each
socket's lag measured from its keep-alive pongs."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

from fastapi.testclient import TestClient
from websockets.frames import Frame, Opcode

from dotfight.server.socket_lag import SCOPE_KEY, SocketLag, allowance_of
from dotfight.server.transport import LeanWebSocketProtocol


def _create(client: TestClient, mode: str, clock: dict[str, int] | None) -> dict[str, Any]:
    answer = client.post("/api/pages", json={"preset": "quick", "mode": mode, "clock": clock})
    assert answer.status_code == 201, answer.text
    created: dict[str, Any] = answer.json()
    return created


def _act(client: TestClient, page: dict[str, Any], side: str, action: dict[str, Any], version: int) -> Any:
    headers = {"Authorization": f"Bearer {page['seats'][side]}"}
    body = {"action": action, "version": version}
    return client.post(f"/api/pages/{page['id']}/actions", json=body, headers=headers)


def test_the_actions_answer_and_the_snapshot_carry_the_clock(client: TestClient) -> None:
    page = _create(client, "link", {"per_move_s": 7200})
    answer = _act(client, page, "blue", {"type": "quick_setup"}, 0)
    assert answer.status_code == 200, answer.text
    clock = answer.json()["clock"]
    assert clock["per_move_s"] == 7200 and clock["running"] == "blue"
    answer = _act(client, page, "blue", {"type": "ready"}, 1)
    clock = answer.json()["clock"]
    assert clock["running"] == "red" and clock["red_s"] > 7190 and clock["blue_s"] == 7200
    shown = client.get(f"/api/pages/{page['id']}").json()["clock"]
    assert shown["running"] == "red" and shown["deadline"] == clock["deadline"]
    # The summary's deadline moved with the move (the store writes it with the clock).
    [summary] = client.get(f"/api/pages?ids={page['id']}").json()
    assert summary["running"] == "red"
    moved = datetime.fromisoformat(summary["deadline"]) - datetime.fromisoformat(clock["deadline"])
    assert abs(moved.total_seconds()) < 0.001  # the snapshot's is to the millisecond


def test_a_page_without_a_clock_answers_as_before(client: TestClient) -> None:
    page = _create(client, "link", None)
    answer = _act(client, page, "blue", {"type": "quick_setup"}, 0)
    assert set(answer.json()) == {"version", "events"}
    assert client.get(f"/api/pages/{page['id']}").json()["clock"] is None
    with client.websocket_connect(f"/api/pages/{page['id']}/ws") as socket:
        socket.send_json({"type": "hello", "token": page["seats"]["blue"], "version": 0})
        assert socket.receive_json()["snapshot"]["clock"] is None
        socket.send_json({"type": "action", "action": {"type": "ready"}, "version": 1, "move_id": "m1"})
        messages = [socket.receive_json() for _ in range(3)]
    [events] = [message for message in messages if message["type"] == "events"]
    assert "clock" not in events


def test_every_events_message_of_a_page_with_a_clock_carries_it(client: TestClient) -> None:
    page = _create(client, "live", {"initial_s": 300, "increment_s": 2})
    _act(client, page, "blue", {"type": "quick_setup"}, 0)
    with client.websocket_connect(f"/api/pages/{page['id']}/ws") as socket:
        socket.send_json({"type": "hello", "token": page["seats"]["red"], "version": 0})
        state = socket.receive_json()
        assert state["type"] == "state" and state["snapshot"]["clock"]["running"] == "blue"
        assert state["snapshot"]["clock"]["initial_s"] == 300
        _act(client, page, "blue", {"type": "ready"}, 1)
        # The presence of the seats may come in one message or, on a loaded machine, in two (it is
        # gathered over a short delay): whatever comes before the move's events is presence.
        heard = [socket.receive_json()]
        while heard[-1]["type"] != "events" and len(heard) < 4:
            heard.append(socket.receive_json())
        *before, events = heard
        assert all(message["type"] == "presence" for message in before), before
        assert events["version"] == 2 and events["clock"]["running"] == "red"
        # A catch-up hello (events after a version) carries the clock now.
    with client.websocket_connect(f"/api/pages/{page['id']}/ws") as again:
        again.send_json({"type": "hello", "token": page["seats"]["red"], "version": 1})
        caught_up = again.receive_json()
        assert caught_up["type"] == "events" and caught_up["clock"]["running"] == "red"


def test_each_keep_alive_pong_is_a_lag_sample_of_its_socket() -> None:
    async def pong_after(round_trip_s: float) -> SocketLag:
        loop = asyncio.get_running_loop()
        lag = SocketLag()
        protocol = object.__new__(LeanWebSocketProtocol)  # only what handle_pong reads
        protocol.scope = {SCOPE_KEY: lag}  # type: ignore[misc]
        protocol.loop = loop
        protocol.pending_ping_payload = b"ping"
        protocol.ping_sent_at = loop.time() - round_trip_s
        protocol.pong_timer = None
        protocol.last_ping_rtt = 0.0
        protocol.handle_pong(Frame(Opcode.PONG, b"ping"))
        protocol.handle_pong(Frame(Opcode.PONG, b"ping"))  # a stale repeat is no sample
        return lag

    lag = asyncio.run(pong_after(0.4))
    assert lag.estimate.samples == 1 and abs(lag.allowance() - 0.2) < 0.05
    assert abs(allowance_of({SCOPE_KEY: lag}) - 0.2) < 0.05
    assert allowance_of({}) == 0.1  # no socket lag measured: the HTTP allowance
