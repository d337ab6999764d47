"""The WebSocket protocol against a real server process (uvicorn on loopback, SQLite file)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from server_testkit import SocketClient, as_stored, simple_action
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from tests.support.server_process import ServerProcess


def create_page(server: ServerProcess, mode: str = "live") -> dict[str, Any]:
    response = server.http.post("/api/pages", json={"preset": "quick", "mode": mode})
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def get_snapshot(server: ServerProcess, page_id: str) -> dict[str, Any]:
    result: dict[str, Any] = server.http.get(f"/api/pages/{page_id}").json()
    return result


def get_log(server: ServerProcess, page_id: str) -> dict[str, Any]:
    result: dict[str, Any] = server.http.get(f"/api/pages/{page_id}/log").json()
    return result


@asynccontextmanager
async def socket(server: ServerProcess, page_id: str, **options: Any) -> AsyncIterator[SocketClient]:
    async with connect(server.ws_url(page_id), **options) as connection:
        yield SocketClient(connection)


@asynccontextmanager
async def both_seats(
    server: ServerProcess, page_id: str, tokens: dict[str, str]
) -> AsyncIterator[tuple[SocketClient, SocketClient]]:
    """Blue's and red's sockets on the page, each greeted with its token from version 0."""
    async with socket(server, page_id) as blue, socket(server, page_id) as red:
        await blue.hello(tokens["blue"], 0)
        await red.hello(tokens["red"], 0)
        yield blue, red


async def play_moves(
    server: ServerProcess,
    page_id: str,
    seats: dict[str, SocketClient],
    listeners: list[SocketClient],
    moves: int,
    heard_by_last: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Plays up to `moves` actions over the seats' sockets; every listener must hear each one."""
    current = get_snapshot(server, page_id)
    for _ in range(moves):
        if current["phase"] == "over":
            break
        version = current["version"]
        sender = seats[current["side_to_act"]]
        move_id = f"{page_id}-{version}"
        await sender.act(simple_action(current), version, move_id)
        heard = [await listener.receive() for listener in listeners]
        assert all(message["type"] == "events" and message["version"] == version + 1 for message in heard), (
            heard
        )
        assert all(message["events"] == heard[0]["events"] for message in heard)
        if heard_by_last is not None:
            heard_by_last.append(heard[-1])
        assert await sender.receive() == {"type": "ack", "move_id": move_id, "version": version + 1}
        current = get_snapshot(server, page_id)
    return current


async def test_a_quick_page_played_over_websockets_with_a_watcher(live_server: ServerProcess) -> None:
    created = create_page(live_server)
    page_id, tokens = created["id"], created["seats"]
    async with (
        socket(live_server, page_id) as blue,
        socket(live_server, page_id) as red,
        socket(live_server, page_id) as watcher,
    ):
        for client, seat in ((blue, "blue"), (red, "red"), (watcher, None)):
            state = await client.hello(tokens[seat] if seat else None, 0)
            assert state["type"] == "state" and state["seat"] == seat
            assert state["snapshot"]["version"] == 0 and state["snapshot"]["seed"] is None
        watched: list[dict[str, Any]] = []
        seats = {"blue": blue, "red": red}
        final = await play_moves(live_server, page_id, seats, [blue, red, watcher], 3000, watched)
    assert final["phase"] == "over" and final["winner"] in ("blue", "red")
    assert final["seed"] is not None
    log = get_log(live_server, page_id)
    assert [as_stored(message["events"]) for message in watched] == [
        entry["events"] for entry in log["entries"]
    ]
    move_ids = [entry["move_id"] for entry in log["entries"]]
    assert move_ids == [f"{page_id}-{version}" for version in range(final["version"])]
    # Tokens travel in headers, fragments and WebSocket messages only: the access log never holds one.
    server_log = live_server.log_text()
    assert "/api/pages/" in server_log
    assert tokens["blue"] not in server_log and tokens["red"] not in server_log


async def test_presence_follows_the_seats_that_are_connected(live_server: ServerProcess) -> None:
    created = create_page(live_server)
    page_id, tokens = created["id"], created["seats"]
    # A live page's presence carries claim_at: null while blue, the side to act, is here.
    async with socket(live_server, page_id) as blue:
        await blue.hello(tokens["blue"], 0)
        assert await blue.receive_presence() == {
            "type": "presence",
            "blue": True,
            "red": False,
            "claim_at": None,
        }
        async with socket(live_server, page_id) as red:
            await red.hello(tokens["red"], 0)
            assert await blue.receive_presence() == {
                "type": "presence",
                "blue": True,
                "red": True,
                "claim_at": None,
            }
            async with socket(live_server, page_id) as watcher:
                await watcher.hello(None, 0)
                assert await watcher.receive_presence() == {
                    "type": "presence",
                    "blue": True,
                    "red": True,
                    "claim_at": None,
                }
        # Red's socket closed: blue hears it (after the watcher's own comings and goings).
        while (update := await blue.receive_presence()) != {
            "type": "presence",
            "blue": True,
            "red": False,
            "claim_at": None,
        }:
            assert update == {"type": "presence", "blue": True, "red": True, "claim_at": None}


async def test_a_dropped_client_resumes_from_its_version(live_server: ServerProcess) -> None:
    created = create_page(live_server)
    page_id, tokens = created["id"], created["seats"]
    async with both_seats(live_server, page_id, tokens) as (blue, red):
        await play_moves(live_server, page_id, {"blue": blue, "red": red}, [blue, red], 4)
    dropped_at = 4
    async with socket(live_server, page_id) as blue:
        await blue.hello(tokens["blue"], dropped_at)  # events since 4: none yet
        current = get_snapshot(live_server, page_id)
        for _ in range(5):  # blue plays both sides' moves over HTTP while red is away
            side = current["side_to_act"]
            response = live_server.http.post(
                f"/api/pages/{page_id}/actions",
                json={"action": simple_action(current), "version": current["version"]},
                headers={"Authorization": f"Bearer {tokens[side]}"},
            )
            assert response.status_code == 200
            current = get_snapshot(live_server, page_id)
    async with socket(live_server, page_id) as red:
        resumed = await red.hello(tokens["red"], dropped_at)
        entries = get_log(live_server, page_id)["entries"]
        assert resumed["type"] == "events" and resumed["version"] == current["version"] == 9
        assert as_stored(resumed["events"]) == [
            event for entry in entries[dropped_at:] for event in entry["events"]
        ]
        fresh = await red.hello(tokens["red"], 0)  # a client without a version gets the whole snapshot
        assert fresh["type"] == "state" and fresh["snapshot"] == current


async def test_a_repeated_move_id_is_acknowledged_and_never_applied_twice(live_server: ServerProcess) -> None:
    created = create_page(live_server)
    page_id, tokens = created["id"], created["seats"]
    async with both_seats(live_server, page_id, tokens) as (blue, red):
        await blue.act({"type": "quick_setup"}, 0, "setup-1")
        assert (await red.receive())["version"] == 1
        assert (await blue.receive())["type"] == "events"
        assert await blue.receive() == {"type": "ack", "move_id": "setup-1", "version": 1}
        await blue.act({"type": "quick_setup"}, 0, "setup-1")  # the retry of a move whose ack was lost
        assert await blue.receive() == {"type": "ack", "move_id": "setup-1", "version": 1, "duplicate": True}
        await blue.act({"type": "ready"}, 1, "ready-1")
        # Red heard nothing in between: the next thing it hears is version 2.
        assert (await red.receive())["version"] == 2
    assert len(get_log(live_server, page_id)["entries"]) == 2


async def test_two_sockets_of_one_seat_racing_at_one_version(live_server: ServerProcess) -> None:
    created = create_page(live_server)
    page_id, tokens = created["id"], created["seats"]
    async with socket(live_server, page_id) as first, socket(live_server, page_id) as second:
        await first.hello(tokens["blue"], 0)
        await second.hello(tokens["blue"], 0)
        await asyncio.gather(
            first.act({"type": "quick_setup"}, 0, "first"), second.act({"type": "quick_setup"}, 0, "second")
        )
        answers = {}
        for client, move_id in ((first, "first"), (second, "second")):
            while True:
                message = await client.receive()
                if message["type"] in ("ack", "error"):
                    assert message["move_id"] == move_id
                    answers[move_id] = message
                    break
    kinds = sorted(message["type"] for message in answers.values())
    assert kinds == ["ack", "error"]
    error = next(message for message in answers.values() if message["type"] == "error")
    assert error["code"] == "stale_version" and error["snapshot"]["version"] == 1
    assert len(get_log(live_server, page_id)["entries"]) == 1


async def test_watchers_forged_tokens_and_out_of_turn_moves_are_refused(live_server: ServerProcess) -> None:
    created = create_page(live_server)
    page_id, tokens = created["id"], created["seats"]
    async with socket(live_server, page_id) as watcher, socket(live_server, page_id) as red:
        await watcher.hello(None, 0)
        await watcher.act({"type": "quick_setup"}, 0, "sneaky")
        refusal = await watcher.receive()
        assert (refusal["type"], refusal["code"], refusal["move_id"]) == ("error", "bad_token", "sneaky")
        await red.hello(tokens["red"], 0)
        await red.act({"type": "quick_setup"}, 0, "early")
        refusal = await red.receive()
        assert (refusal["code"], refusal["move_id"]) == ("not_your_turn", "early")
        # Python's JSON writes NaN and Infinity literals: refused, yet answered under their move_id.
        nan_flick = {"type": "flick", "soldier": "b1s1", "kind": "snipe", "vector": [float("nan"), 1]}
        await red.send({"type": "action", "action": nan_flick, "version": 0, "move_id": "nan"})
        refusal = await red.receive()
        assert (refusal["type"], refusal["code"], refusal["move_id"]) == ("error", "bad_request", "nan")
        far = {"type": "position", "soldiers": [{"id": "r1s1", "x": float("inf"), "y": 1}]}
        await red.send({"type": "action", "action": far, "version": 0, "move_id": "inf"})
        assert (await red.receive())["move_id"] == "inf"
        await red.send(
            {"type": "action", "action": {"type": "ready"}, "version": float("-inf"), "move_id": "v"}
        )
        assert (await red.receive())["move_id"] == "v"
        await red.act({"type": "quick_setup"}, 7, "stale")
        assert (await red.receive())["code"] == "stale_version"
    async with socket(live_server, page_id) as forger:
        refusal = await forger.hello("forged-token-forged-token", 0)
        assert (refusal["type"], refusal["code"]) == ("error", "bad_token")
        with pytest.raises(ConnectionClosed):
            await forger.receive()
    assert get_snapshot(live_server, page_id)["version"] == 0
    assert get_log(live_server, page_id)["entries"] == []


@pytest.mark.parametrize(
    "hello",
    [
        {"type": "hello", "token": "x" * 129, "version": 0},
        {"type": "hello", "version": "1"},
        {"type": "hello", "version": float("nan")},
        {"type": "hello", "version": 0, "seat": "blue"},
        {"type": "hello", "token": "forged-token-forged-token", "version": 0},
    ],
    ids=["long-token", "string-version", "nan-version", "unknown-field", "forged-token"],
)
async def test_every_refused_hello_is_answered_and_closed(
    live_server: ServerProcess, hello: dict[str, Any]
) -> None:
    created = create_page(live_server)
    async with socket(live_server, created["id"]) as client:
        await client.send(hello)
        refusal = await client.receive()
        assert refusal["type"] == "error" and refusal["code"] in ("bad_request", "bad_token")
        assert "move_id" not in refusal
        with pytest.raises(ConnectionClosed) as closed:
            await client.receive()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
    async with socket(live_server, created["id"]) as blue:  # a joined seat refused on a resync too
        assert (await blue.hello(created["seats"]["blue"], 0))["type"] == "state"
        await blue.send({"type": "hello", "version": -1})
        assert (await blue.receive())["code"] == "bad_request"
        with pytest.raises(ConnectionClosed) as closed:
            await blue.receive()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008


async def test_a_socket_that_never_says_hello_is_closed(tmp_path: Path) -> None:
    server = ServerProcess.on_sqlite(tmp_path, extra_env={"DOTFIGHT_WS_HELLO_TIMEOUT": "0.5"})
    server.start()
    try:
        created = create_page(server)
        async with socket(server, created["id"]) as silent, socket(server, created["id"]) as chatty:
            await chatty.act({"type": "quick_setup"}, 0, "before-hello")  # an action is no hello
            assert (await chatty.receive())["move_id"] == "before-hello"
            for client in (silent, chatty):
                refusal = await client.receive()
                assert (refusal["type"], refusal["code"]) == ("error", "bad_request")
                with pytest.raises(ConnectionClosed) as closed:
                    await client.receive()
                assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
        async with socket(server, created["id"]) as greeted:  # one that says hello stays
            assert (await greeted.hello(None, 0))["type"] == "state"
            await asyncio.sleep(1.0)
            assert (await greeted.hello(None, 0))["type"] == "state"
        assert get_log(server, created["id"])["entries"] == []
    finally:
        server.stop()


async def test_a_foreign_origin_is_refused_and_the_own_origin_allowed(live_server: ServerProcess) -> None:
    page_id = create_page(live_server)["id"]
    with pytest.raises(InvalidStatus) as refused:
        async with socket(live_server, page_id, origin="http://evil.example"):
            pass
    assert refused.value.response.status_code == 403
    async with socket(live_server, page_id, origin=live_server.base_url) as client:
        assert (await client.hello(None, 0))["type"] == "state"


async def test_floods_close_1008_and_oversized_frames_close_1009(fresh_server: ServerProcess) -> None:
    fresh_server.start()  # default limits: 20 messages a second, bursts of 40, 8 KB frames
    page_id = create_page(fresh_server)["id"]
    async with socket(fresh_server, page_id) as client:
        await client.hello(None, 0)
        with pytest.raises(ConnectionClosed) as closed:
            for _ in range(200):
                await client.send({"type": "hello", "version": 0})
            while True:
                await client.receive()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
    async with socket(fresh_server, page_id, max_size=None) as client:
        await client.hello(None, 0)
        with pytest.raises(ConnectionClosed) as closed:
            await client.send({"type": "hello", "version": 0, "pad": "x" * 9000})
            await client.receive()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
    async with socket(fresh_server, page_id) as client:  # and the server still serves
        assert (await client.hello(None, 0))["type"] == "state"


async def test_a_server_killed_mid_game_keeps_every_committed_move(fresh_server: ServerProcess) -> None:
    fresh_server.start()
    created = create_page(fresh_server, mode="link")
    page_id, tokens = created["id"], created["seats"]
    async with both_seats(fresh_server, page_id, tokens) as (blue, red):
        before = await play_moves(fresh_server, page_id, {"blue": blue, "red": red}, [blue, red], 12)
        fresh_server.kill()
    fresh_server.start()
    log = get_log(fresh_server, page_id)
    assert [entry["move_id"] for entry in log["entries"]] == [f"{page_id}-{v}" for v in range(12)]
    assert get_snapshot(fresh_server, page_id) == before
    last = log["entries"][-1]
    async with socket(fresh_server, page_id) as blue, socket(fresh_server, page_id) as red:
        assert (await blue.hello(tokens["blue"], 12)) == {"type": "events", "version": 12, "events": []}
        await red.hello(tokens["red"], 12)
        seats = {"blue": blue, "red": red}
        # The retry of the last move after the crash is answered from the log.
        await seats[last["side"]].act(last["action"], 11, last["move_id"])
        assert await seats[last["side"]].receive() == {
            "type": "ack",
            "move_id": last["move_id"],
            "version": 12,
            "duplicate": True,
        }
        after = await play_moves(fresh_server, page_id, seats, [blue, red], 6)
    assert after["version"] == 18
