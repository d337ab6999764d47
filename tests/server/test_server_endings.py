"""`time_out` and `abandon` are the server's to write, never a client's (bad_request, nothing changes),
over HTTP and over the page socket; `claim` is a client action that never reaches the engine and, while
the other side is here, is answered as not due (illegal_action; the claim once due:
test_people_absence_claims.py)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from server_testkit import SocketClient
from websockets.asyncio.client import connect

from tests.support.server_process import ServerProcess

SERVER_ONLY = [{"type": "time_out"}, {"type": "abandon"}]
BAD_CLAIMS = [{"type": "claim", "side": "blue"}, {"type": "claim", "move_id": "x"}]


def _live_page(client: TestClient) -> dict[str, Any]:
    response = client.post("/api/pages", json={"preset": "quick", "mode": "live"})
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def _act(client: TestClient, page_id: str, token: str, action: dict[str, Any], version: int = 0) -> Any:
    return client.post(
        f"/api/pages/{page_id}/actions",
        json={"action": action, "version": version, "move_id": "m1"},
        headers={"Authorization": f"Bearer {token}"},
    )


def _unchanged(client: TestClient, page_id: str) -> None:
    assert client.get(f"/api/pages/{page_id}").json()["version"] == 0
    assert client.get(f"/api/pages/{page_id}/log").json()["entries"] == []


@pytest.mark.parametrize(
    "action", SERVER_ONLY + BAD_CLAIMS, ids=["time_out", "abandon", "claim+side", "claim+id"]
)
@pytest.mark.parametrize("side", ["blue", "red"])
def test_a_client_may_not_send_what_only_the_server_writes(
    client: TestClient, action: dict[str, Any], side: str
) -> None:
    created = _live_page(client)
    response = _act(client, created["id"], created["seats"][side], action)
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == "bad_request"
    _unchanged(client, created["id"])
    # The same move_id still plays: the refusal kept nothing of it.
    assert _act(client, created["id"], created["seats"]["blue"], {"type": "quick_setup"}).status_code == 200


def test_a_claim_is_answered_as_not_due_and_changes_nothing(client: TestClient) -> None:
    created = _live_page(client)
    response = _act(client, created["id"], created["seats"]["red"], {"type": "claim"})
    assert response.status_code == 422, response.text
    assert response.json()["error"] == {
        "code": "illegal_action",
        "reason": "claim_not_due",
        "message": response.json()["error"]["message"],
    }
    _unchanged(client, created["id"])


def test_a_claim_still_needs_a_seat(client: TestClient) -> None:
    created = _live_page(client)
    response = client.post(
        f"/api/pages/{created['id']}/actions", json={"action": {"type": "claim"}, "version": 0}
    )
    assert response.json()["error"]["code"] == "bad_token"


async def test_the_socket_refuses_server_only_actions_and_answers_claims_as_not_due(
    live_server: ServerProcess,
) -> None:
    response = live_server.http.post("/api/pages", json={"preset": "quick", "mode": "live"})
    created = response.json()
    page_id, tokens = created["id"], created["seats"]
    async with connect(live_server.ws_url(page_id)) as connection:
        blue = SocketClient(connection)
        assert (await blue.hello(tokens["blue"], 0))["type"] == "state"
        for number, action in enumerate(SERVER_ONLY + BAD_CLAIMS):
            await blue.act(action, 0, f"s{number}")
            refusal = await blue.receive()
            assert (refusal["type"], refusal["code"], refusal["move_id"]) == (
                "error",
                "bad_request",
                f"s{number}",
            )
        await blue.act({"type": "claim"}, 0, "claim")
        refusal = await blue.receive()
        assert (refusal["code"], refusal["reason"], refusal["move_id"]) == (
            "illegal_action",
            "claim_not_due",
            "claim",
        )
        await blue.act({"type": "quick_setup"}, 0, "play")
        assert (await blue.receive())["type"] == "events"
        assert await blue.receive() == {"type": "ack", "move_id": "play", "version": 1}
    log = live_server.http.get(f"/api/pages/{page_id}/log").json()["entries"]
    assert [entry["action"]["type"] for entry in log] == ["quick_setup"]
