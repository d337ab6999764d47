"""Page creation: rate-limited per client address (a forged X-Forwarded-For buys no fresh limit unless
the proxy is trusted), and pages never played past setup expire (410 page_expired, sockets closed with
4410) while played and finished pages are kept."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import Any

import httpx
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from tests.hostile.conftest import StartServer
from tests.support.players import nearest_snipe_action
from tests.support.server_process import ServerProcess

STRICT_CREATION = {"DOTFIGHT_PAGE_CREATION_BURST": "5", "DOTFIGHT_PAGE_CREATIONS_PER_MINUTE": "1"}


def create(server: ServerProcess, forwarded_for: str | None = None) -> httpx.Response:
    headers = {"X-Forwarded-For": forwarded_for} if forwarded_for else {}
    return server.http.post("/api/pages", json={"mode": "live"}, headers=headers)


def test_page_creation_is_rate_limited_per_address_and_forged_addresses_do_not_help(
    start_server: StartServer,
) -> None:
    server = start_server(extra_env=STRICT_CREATION)
    assert [create(server).status_code for _ in range(5)] == [201] * 5
    refused = create(server)
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "rate_limited"
    assert int(refused.headers["Retry-After"]) >= 1
    # Every forged address is still the one loopback client: nobody is trusted by default.
    forged = [create(server, f"203.0.113.{n}").status_code for n in range(1, 21)]
    assert forged == [429] * 20
    # Other requests are not creation: reading and acting go on.
    assert server.http.get("/api/health").status_code == 200


def test_behind_a_trusted_proxy_each_forwarded_address_has_its_own_limit(start_server: StartServer) -> None:
    server = start_server(extra_env=STRICT_CREATION, extra_args=["--forwarded-allow-ips", "127.0.0.1"])
    assert [create(server, "198.51.100.7").status_code for _ in range(6)] == [201] * 5 + [429]
    assert create(server, "198.51.100.8").status_code == 201


def play_to(server: ServerProcess, created: dict[str, Any], phase: str, *, resign: bool = False) -> None:
    """Plays a local page over HTTP until it reaches `phase` (then resigns, if asked)."""
    auth = {"Authorization": f"Bearer {created['seats']['blue']}"}
    page_id = created["id"]
    for _ in range(20):
        snapshot = server.http.get(f"/api/pages/{page_id}").json()
        if snapshot["phase"] == phase:
            break
        action = nearest_snipe_action(snapshot)
        body = {"action": action, "version": snapshot["version"]}
        assert server.http.post(f"/api/pages/{page_id}/actions", json=body, headers=auth).status_code == 200
    else:
        raise AssertionError(f"never reached {phase}")
    if resign:
        snapshot = server.http.get(f"/api/pages/{page_id}").json()
        body = {"action": {"type": "resign"}, "version": snapshot["version"]}
        assert server.http.post(f"/api/pages/{page_id}/actions", json=body, headers=auth).status_code == 200


def test_pages_never_played_past_setup_expire_and_played_ones_are_kept(start_server: StartServer) -> None:
    server = start_server(
        extra_env={
            "DOTFIGHT_PAGE_SETUP_TTL_DAYS": str(3 / 86400),  # three seconds
            "DOTFIGHT_PAGE_EXPIRY_SWEEP_SECONDS": "0.5",
        }
    )
    waiting = create(server).json()  # a shared link nobody answered
    watched = create(server).json()  # the same, with its first player still looking at it
    played = server.http.post("/api/pages", json={"mode": "local"}).json()
    play_to(server, played, "play")
    finished = server.http.post("/api/pages", json={"mode": "local"}).json()
    play_to(server, finished, "play", resign=True)
    assert server.http.get(f"/api/pages/{finished['id']}").json()["phase"] == "over"

    async def watch_until_expired() -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = []
        async with connect(server.ws_url(watched["id"])) as ws:
            token = watched["seats"]["blue"]
            await ws.send(json.dumps({"type": "hello", "token": token, "version": None}))
            with contextlib.suppress(ConnectionClosed):  # closed with 4410, as it should be
                async for text in ws:
                    messages.append(json.loads(text))
                    if len(messages) > 20:
                        break
            assert ws.close_code == 4410
        return messages

    messages = asyncio.run(asyncio.wait_for(watch_until_expired(), timeout=20))
    assert messages[-1]["type"] == "error" and messages[-1]["code"] == "page_expired"

    deadline = time.monotonic() + 10
    while server.http.get(f"/api/pages/{waiting['id']}").status_code != 410 and time.monotonic() < deadline:
        time.sleep(0.2)
    gone = server.http.get(f"/api/pages/{waiting['id']}")
    assert gone.status_code == 410
    assert gone.json()["error"]["code"] == "page_expired"
    assert server.http.get(f"/api/pages/{waiting['id']}/log").status_code == 410
    auth = {"Authorization": f"Bearer {waiting['seats']['blue']}"}
    act = {"action": {"type": "quick_setup"}, "version": 0}
    answer = server.http.post(f"/api/pages/{waiting['id']}/actions", json=act, headers=auth)
    assert answer.status_code == 410

    async def hello_on_expired() -> tuple[dict[str, Any], int | None]:
        async with connect(server.ws_url(waiting["id"])) as ws:
            await ws.send(json.dumps({"type": "hello", "token": None, "version": None}))
            message = json.loads(await asyncio.wait_for(ws.recv(), timeout=10))
            await asyncio.wait_for(ws.wait_closed(), timeout=10)
            return message, ws.close_code

    message, code = asyncio.run(hello_on_expired())
    assert message["code"] == "page_expired" and code == 4410
    # Played and finished pages are kept; an id never seen is still unknown (404), not expired.
    time.sleep(1.0)
    assert server.http.get(f"/api/pages/{played['id']}").status_code == 200
    assert server.http.get(f"/api/pages/{finished['id']}").status_code == 200
    assert server.http.get("/api/pages/neverexisted").status_code == 404
    summaries = server.http.get("/api/pages", params={"ids": f"{waiting['id']},{played['id']}"}).json()
    assert [summary["id"] for summary in summaries] == [played["id"]]
