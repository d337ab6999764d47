"""Issue 18, item 6: every integer a client sends (`from`, `limit`, `version`) is bounded to what both
databases store (the columns are `Integer`: at most 2³¹ − 1), and anything past it, or a URL that does
not parse, is 400 `bad_request` in the JSON error shape — never a 500, never a broken connection."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
from websockets.asyncio.client import connect

from tests.hostile.conftest import StartServer
from tests.support.page_client import act, create_page, local_page_in_play
from tests.support.server_process import ServerProcess

LARGEST = 2**31 - 1
TOO_LARGE = [2**31, 2**53 + 1, 2**63 - 1, 2**63, 2**64, 10**30]


def refused(answer: httpx.Response) -> bool:
    body = answer.json()
    return answer.status_code == 400 and body["error"]["code"] == "bad_request" and body["error"]["message"]


def test_log_paging_past_what_the_database_stores_is_refused_and_the_connection_lives(
    start_server: StartServer,
) -> None:
    server = start_server()
    page_id, _, _ = local_page_in_play(server)
    url = f"/api/pages/{page_id}/log"
    for value in TOO_LARGE:
        for name in ("from", "limit"):
            answer = server.http.get(url, params={name: value})
            assert refused(answer), (name, value, answer.status_code, answer.text)
            # The same kept-alive connection answers the next request.
            assert server.http.get("/api/health").status_code == 200, (name, value)
    edge = server.http.get(url, params={"from": LARGEST, "limit": LARGEST})
    assert edge.status_code == 200 and edge.json()["entries"] == [] and edge.json()["next"] is None
    assert server.http.get(url).status_code == 200


def test_action_versions_past_what_the_database_stores_are_refused(start_server: StartServer) -> None:
    server = start_server()
    page_id, token, page = local_page_in_play(server)
    for value in TOO_LARGE:
        answer = act(server, page_id, token, {"type": "resign"}, value)
        assert refused(answer), (value, answer.status_code, answer.text)
    # Nothing changed: the page is still in play at its version.
    assert server.http.get(f"/api/pages/{page_id}").json()["version"] == page["version"]
    assert act(server, page_id, token, {"type": "resign"}, LARGEST).status_code == 409  # stale, as ever

    async def hello_and_action(version: int) -> list[dict[str, Any]]:
        async with connect(server.ws_url(page_id)) as ws:
            await ws.send(json.dumps({"type": "hello", "token": token, "version": version}))
            first = json.loads(await asyncio.wait_for(ws.recv(), timeout=10))
            return [first]

    for value in (2**31, 2**63):
        (message,) = asyncio.run(hello_and_action(value))
        assert message["type"] == "error" and message["code"] == "bad_request", (value, message)


def test_a_push_endpoint_that_does_not_parse_is_refused(start_server: StartServer) -> None:
    server: ServerProcess = start_server()
    created = create_page(server, preset="quick", mode="link")
    keys = {"p256dh": "B" + "A" * 86, "auth": "A" * 22}
    headers = {"Authorization": f"Bearer {created['seats']['blue']}"}
    for endpoint in ("https://[zz]/x", "https://[::1/x", "https://host:99999/x", "https://host:port/x"):
        body = {"endpoint": endpoint, "keys": keys}
        answer = server.http.post(f"/api/pages/{created['id']}/push", json=body, headers=headers)
        assert refused(answer), (endpoint, answer.status_code, answer.text)
        assert server.http.get("/api/health").status_code == 200, endpoint
