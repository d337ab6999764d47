"""Issue 9, item 4: no unbounded growth from one client. Actions that would change nothing are refused as
they arrive (stored ones still replay), and every page and every client address has an action budget
that WebSocket and HTTP spend together, however many sockets a client opens."""

from __future__ import annotations

import json
import time
from typing import Any

from websockets.sync.client import connect

from dotfight.engine import State
from tests.hostile.conftest import StartServer
from tests.support.page_client import act, page_in_positioning, snapshot, store_blue_actions, two_places
from tests.support.server_process import ServerProcess

# How long the budget tests keep sending, and the slack allowed on what a token bucket lets through.
SEND_SECONDS = 3.0
SLACK = 3


def ws_action(
    server: ServerProcess, page_id: str, token: str, action: dict[str, Any], version: int
) -> dict[str, Any]:
    """Opens a new socket, says hello, sends one action and returns the server's answer to it."""
    with connect(server.ws_url(page_id), open_timeout=10) as socket:
        socket.send(json.dumps({"type": "hello", "token": token, "version": None}))
        move_id = f"m{time.monotonic_ns()}"
        socket.send(json.dumps({"type": "action", "action": action, "version": version, "move_id": move_id}))
        for _ in range(20):
            message: dict[str, Any] = json.loads(socket.recv(timeout=10))
            if message.get("move_id") == move_id:
                return message
    raise AssertionError("no answer to the action")


def send_for_a_while(server: ServerProcess, pages: list[tuple[str, str, State]]) -> tuple[int, int, float]:
    """Sends moves round the pages, every other one over a fresh socket, for SEND_SECONDS; returns
    (accepted, rate_limited, seconds taken)."""
    versions = {page_id: 1 for page_id, _, _ in pages}
    places = {page_id: two_places(state) for page_id, _, state in pages}
    accepted = limited = 0
    started = time.monotonic()
    sent = 0
    while time.monotonic() - started < SEND_SECONDS and sent < 2000:
        page_id, token, _ = pages[sent % len(pages)]
        version = versions[page_id]
        action = places[page_id][version % 2]
        if sent % 2:
            answer = ws_action(server, page_id, token, action, version)
            code = answer.get("code") if answer["type"] == "error" else None
        else:
            response = act(server, page_id, token, action, version)
            code = response.json()["error"]["code"] if response.status_code != 200 else None
        sent += 1
        if code is None:
            accepted += 1
            versions[page_id] += 1
        else:
            assert code == "rate_limited", code
            limited += 1
    return accepted, limited, time.monotonic() - started


def test_an_address_spends_one_budget_over_http_and_reconnecting_sockets(start_server: StartServer) -> None:
    server = start_server(
        extra_env={
            "DOTFIGHT_ACTIONS_PER_ADDRESS_PER_SECOND": "5",
            "DOTFIGHT_ACTIONS_PER_ADDRESS_BURST": "10",
        }
    )
    pages = [page_in_positioning(server) for _ in range(3)]  # 3 setup actions: within the burst
    accepted, limited, seconds = send_for_a_while(server, pages)
    assert limited > 0
    assert accepted <= 10 - 3 + 5 * seconds + SLACK, (accepted, seconds)


def test_a_page_spends_one_budget_whoever_sends(start_server: StartServer) -> None:
    server = start_server(
        extra_env={"DOTFIGHT_ACTIONS_PER_PAGE_PER_SECOND": "5", "DOTFIGHT_ACTIONS_PER_PAGE_BURST": "10"}
    )
    page = page_in_positioning(server)
    accepted, limited, seconds = send_for_a_while(server, [page])
    assert limited > 0
    assert accepted <= 10 - 1 + 5 * seconds + SLACK, (accepted, seconds)


def test_actions_that_change_nothing_are_refused_and_add_no_version(start_server: StartServer) -> None:
    server = start_server()
    page_id, token, state = page_in_positioning(server)
    home, _ = two_places(state)
    for action in ({"type": "position", "soldiers": []}, home):
        answer = act(server, page_id, token, action, 1)
        assert answer.status_code == 400, answer.text
        assert answer.json()["error"] == {
            "code": "bad_request",
            "message": "this action would change nothing",
            "reason": "no_change",
        }
        refused = ws_action(server, page_id, token, action, 1)
        assert refused["type"] == "error" and refused["reason"] == "no_change", refused
    assert snapshot(server, page_id)["version"] == 1


def test_a_stored_empty_position_still_loads_and_plays_on(start_server: StartServer) -> None:
    server = start_server()
    page_id, token, state = page_in_positioning(server)
    server.stop()
    # An older server stored an empty `position` as version 2: the page must still load and play on.
    store_blue_actions(server, page_id, state, [{"type": "position", "soldiers": []}])
    again = ServerProcess(server.database_url, server.log_path, extra_env=server.extra_env)
    again.start()
    try:
        assert snapshot(again, page_id)["version"] == 2
        _, away = two_places(state)
        assert act(again, page_id, token, away, 2).status_code == 200
        assert len(again.http.get(f"/api/pages/{page_id}/log").json()["entries"]) == 3
    finally:
        again.stop()
