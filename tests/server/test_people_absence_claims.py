"""Absence on live pages, served in-process with a controllable clock (issue 19, item 4): the presence's
`claim_at`, and `claim` — refused before the grace and while the other is here, writing `abandon` (or
`time_out`, by the stored clock) acting as the other side once due, a retried claim's first answer, and
the refusals that change nothing."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from pydantic import ValidationError
from websockets.asyncio.client import connect

from dotfight.server.app import create_app
from dotfight.server.broadcast import LocalBroadcast
from dotfight.server.people.clock import ClockState, LiveClock, iso_utc
from dotfight.server.rooms.absence import RecentMoves
from dotfight.server.services import Services
from dotfight.server.settings import Settings
from tests.server.server_testkit import SocketClient
from tests.support.server_process import free_port

GRACE_S = 60.0
WAIT_S = 10.0


class FakeTime:
    """A wall clock that moves only when told."""

    def __init__(self) -> None:
        # Ahead of the wall clock the database's commit times are stamped with: they stay in its past.
        self.now = time.time() + 1000

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class Served:
    """The server in this process: its base URL, its services, the clock its rooms read, its database."""

    base: str
    services: Services
    clock: FakeTime
    database: Path

    def ws_url(self, page_id: str) -> str:
        return self.base.replace("http://", "ws://") + f"/api/pages/{page_id}/ws"


@pytest.fixture
def served(make_settings: Callable[..., Settings], tmp_path: Path) -> Iterator[Served]:
    """The app under uvicorn on a loopback port in a thread of its own, its rooms on a fake clock."""
    settings = make_settings(live_absence_grace_s=GRACE_S, bot_processes=0)
    app = create_app(settings)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.02)
    services: Services = app.state.services
    clock = FakeTime()
    services.rooms.now = clock
    services.rooms.started_at = clock.now - 3600  # started long before the test's pages
    assert isinstance(services.broadcast, LocalBroadcast)
    services.broadcast.now = clock
    try:
        yield Served(f"http://127.0.0.1:{port}", services, clock, tmp_path / "pages.sqlite3")
    finally:
        server.should_exit = True
        thread.join(30)


def post(served: Served, path: str, body: dict[str, Any], token: str | None = None) -> httpx.Response:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    return httpx.post(served.base + path, json=body, headers=headers, timeout=WAIT_S)


def new_page(served: Served, mode: str = "live", **body: Any) -> dict[str, Any]:
    answer = post(served, "/api/pages", {"preset": "quick", "mode": mode, **body})
    assert answer.status_code == 201, answer.text
    created: dict[str, Any] = answer.json()
    return created


def act(
    served: Served, page_id: str, token: str, action: dict[str, Any], version: int, **more: Any
) -> httpx.Response:
    return post(
        served, f"/api/pages/{page_id}/actions", {"action": action, "version": version, **more}, token
    )


def page_at(served: Served, page_id: str) -> dict[str, Any]:
    page: dict[str, Any] = httpx.get(f"{served.base}/api/pages/{page_id}", timeout=WAIT_S).json()
    return page


def to_red(served: Served, created: dict[str, Any]) -> None:
    """Blue's quick setup and ready: red, arranging, is the side to act (version 2)."""
    blue = created["seats"]["blue"]
    for version, action in enumerate(({"type": "quick_setup"}, {"type": "ready"})):
        assert act(served, created["id"], blue, action, version).status_code == 200


@contextlib.asynccontextmanager
async def seat(served: Served, page_id: str, token: str | None) -> AsyncIterator[SocketClient]:
    """A socket of the page, greeted (its state read)."""
    async with connect(served.ws_url(page_id)) as connection:
        client = SocketClient(connection)
        await client.hello(token)
        yield client


async def presence_until(client: SocketClient, wanted: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """Reads messages until a presence passes `wanted` (bounded; the others are passed over)."""
    for _ in range(40):
        message = await client.receive_presence(WAIT_S) if client.presence else await next_message(client)
        if message["type"] == "presence" and wanted(message):
            return message
    raise AssertionError("no such presence")


async def next_message(client: SocketClient) -> dict[str, Any]:
    """The next message of the socket, whatever it is."""
    message: dict[str, Any] = json.loads(await asyncio.wait_for(client.connection.recv(), WAIT_S))
    return message


async def claim(client: SocketClient, version: int, move_id: str) -> dict[str, Any]:
    """Sends a claim over the socket; returns its ack or error (the events it caused are kept aside)."""
    await client.act({"type": "claim"}, version, move_id)
    while True:
        message = await client.receive()
        if message.get("move_id") == move_id:
            return message


async def test_the_one_who_stayed_sees_claim_at_then_claims_the_win_and_a_retry_gets_its_first_answer(
    served: Served,
) -> None:
    created = new_page(served)
    page_id, seats = created["id"], created["seats"]
    to_red(served, created)
    async with seat(served, page_id, seats["blue"]) as blue:
        async with seat(served, page_id, seats["red"]) as red:
            both = await presence_until(blue, lambda m: m["red"])
            assert both["claim_at"] is None  # red, the side to act, is here
            left_at = served.clock.now + 5
            served.clock.advance(5)
            await red.connection.close()
        gone = await presence_until(blue, lambda m: not m["red"])
        assert gone["claim_at"] == iso_utc(left_at + GRACE_S)
        # Before the grace: refused, nothing written.
        served.clock.advance(GRACE_S - 1)
        early = await claim(blue, 2, "early")
        assert (early["type"], early["code"], early["reason"]) == ("error", "illegal_action", "claim_not_due")
        assert page_at(served, page_id)["version"] == 2
        # After it: abandon written for red, blue wins, and everyone hears it.
        served.clock.advance(1)
        ack = await claim(blue, 2, "c1")
        assert ack == {"type": "ack", "move_id": "c1", "version": 3}
        over = page_at(served, page_id)
        assert (over["phase"], over["winner"]) == ("over", "blue")
        # The retried claim (same move_id), over the socket and over HTTP: its first answer.
        again = await claim(blue, 2, "c1")
        assert again == {"type": "ack", "move_id": "c1", "version": 3, "duplicate": True}
    answer = act(served, page_id, seats["blue"], {"type": "claim"}, 2, move_id="c1")
    assert answer.status_code == 200, answer.text
    assert answer.json()["version"] == 3
    assert {"type": "game_over", "winner": "blue", "reason": "abandoned"} in answer.json()["events"]
    log = httpx.get(f"{served.base}/api/pages/{page_id}/log", timeout=WAIT_S).json()["entries"]
    assert len(log) == 3 and log[-1]["side"] == "red" and log[-1]["action"] == {"type": "abandon"}
    assert log[-1]["move_id"] == "c1"
    # Red's seat sending blue's claim's move_id is not answered with what was written against it.
    red_retry = act(served, page_id, seats["red"], {"type": "claim"}, 2, move_id="c1")
    assert red_retry.status_code == 400 and red_retry.json()["error"]["code"] == "bad_request"


async def test_coming_back_before_the_claim_clears_claim_at_and_the_claim_is_refused(served: Served) -> None:
    created = new_page(served)
    page_id, seats = created["id"], created["seats"]
    to_red(served, created)
    async with seat(served, page_id, seats["blue"]) as blue:
        async with seat(served, page_id, seats["red"]):
            await presence_until(blue, lambda m: m["red"])
        gone = await presence_until(blue, lambda m: not m["red"])
        assert gone["claim_at"] is not None
        served.clock.advance(GRACE_S / 2)
        async with seat(served, page_id, seats["red"]):
            back = await presence_until(blue, lambda m: m["red"])
            assert back["claim_at"] is None
            served.clock.advance(GRACE_S * 2)
            refused = await claim(blue, 2, "c1")
            assert (refused["code"], refused["reason"]) == ("illegal_action", "claim_not_due")
    assert page_at(served, page_id)["version"] == 2


async def test_the_grace_counts_from_the_turn_passing_when_the_other_left_during_ones_own_turn(
    served: Served,
) -> None:
    created = new_page(served)
    page_id, seats = created["id"], created["seats"]
    async with seat(served, page_id, seats["blue"]) as blue:
        async with seat(served, page_id, seats["red"]):
            await presence_until(blue, lambda m: m["red"])
        # Red left during blue's setup: nothing to claim while blue is to act.
        gone = await presence_until(blue, lambda m: not m["red"])
        assert gone["claim_at"] is None
        served.clock.advance(600)
        to_red(served, created)
        passed = served.clock.now
        turned = await presence_until(blue, lambda m: m["claim_at"] is not None)
        assert turned["claim_at"] == iso_utc(passed + GRACE_S)
        served.clock.advance(GRACE_S - 0.5)
        assert (await claim(blue, 2, "c1"))["reason"] == "claim_not_due"
        served.clock.advance(0.5)
        assert (await claim(blue, 2, "c2"))["type"] == "ack"


async def red_came_and_went(served: Served) -> tuple[str, dict[str, str], float]:
    """A live page at red's move whose only socket, red's, came and went: its id, seats, and when red left."""
    created = new_page(served)
    page_id, seats = created["id"], created["seats"]
    to_red(served, created)
    async with seat(served, page_id, seats["red"]):
        await asyncio.sleep(0.3)  # its presence is shared (after the presence delay)
    await asyncio.sleep(0.3)  # the room lets red's seat go
    return page_id, seats, served.clock.now


async def test_a_new_room_counts_from_when_the_seat_left_not_from_its_own_making(served: Served) -> None:
    page_id, seats, left_at = await red_came_and_went(served)
    served.clock.advance(GRACE_S + 30)
    # Blue comes later: the page's room is new, red's departure is what counts.
    async with seat(served, page_id, seats["blue"]) as blue:
        first = await blue.receive_presence(WAIT_S)
        assert first["claim_at"] == iso_utc(left_at + GRACE_S)
        assert (await claim(blue, 2, "c1"))["type"] == "ack"


async def test_a_claim_over_http_with_no_socket_here_reads_the_departure(served: Served) -> None:
    page_id, seats, _ = await red_came_and_went(served)
    served.clock.advance(GRACE_S - 1)
    early = act(served, page_id, seats["blue"], {"type": "claim"}, 2, move_id="h1")
    assert early.status_code == 422 and early.json()["error"]["reason"] == "claim_not_due"
    served.clock.advance(1)
    won = act(served, page_id, seats["blue"], {"type": "claim"}, 2, move_id="h2")
    assert won.status_code == 200, won.text
    assert won.json()["version"] == 3 and page_at(served, page_id)["winner"] == "blue"


async def test_a_claim_once_the_others_time_is_up_writes_time_out_even_while_it_is_here(
    served: Served,
) -> None:
    created = new_page(served, clock={"initial_s": 60, "increment_s": 0})
    page_id, seats = created["id"], created["seats"]
    to_red(served, created)
    # The clock state as the clocks' writer keeps it: red's setup time ran out long ago.
    clock = ClockState(LiveClock(60), 60.0, 60.0, "red", served.clock.now - 1000, setup=True)
    with contextlib.closing(sqlite3.connect(served.database)) as database, database:
        database.execute(
            "UPDATE pages SET clock_state = ? WHERE id = ?", (json.dumps(clock.to_json()), page_id)
        )
    async with seat(served, page_id, seats["blue"]) as blue, seat(served, page_id, seats["red"]):
        await presence_until(blue, lambda m: m["red"])
        assert (await claim(blue, 2, "t1"))["type"] == "ack"
    log = httpx.get(f"{served.base}/api/pages/{page_id}/log", timeout=WAIT_S).json()["entries"]
    assert log[-1]["side"] == "red" and log[-1]["action"] == {"type": "time_out"}
    assert {"type": "game_over", "winner": "blue", "reason": "time"} in log[-1]["events"]


@pytest.mark.parametrize("mode", ["link", "local"])
async def test_a_claim_on_a_page_that_is_not_live_is_refused_and_changes_nothing(
    served: Served, mode: str
) -> None:
    created = new_page(served, mode)
    page_id, seats = created["id"], created["seats"]
    token = seats["red"]
    served.clock.advance(GRACE_S * 10)
    answer = act(served, page_id, token, {"type": "claim"}, 0, move_id="c1")
    assert answer.status_code == 422 and answer.json()["error"]["code"] == "illegal_action"
    assert answer.json()["error"]["reason"] == "claim_not_live"
    assert page_at(served, page_id)["version"] == 0


async def test_claims_of_the_side_to_act_of_a_finished_page_and_of_watchers_are_refused(
    served: Served,
) -> None:
    created = new_page(served)
    page_id, seats = created["id"], created["seats"]
    to_red(served, created)
    served.clock.advance(GRACE_S * 10)
    # Red, the side to act, claims against nobody.
    own = act(served, page_id, seats["red"], {"type": "claim"}, 2)
    assert own.status_code == 422 and own.json()["error"]["reason"] == "claim_not_due"
    # A watcher over the socket, and without a token over HTTP: bad_token.
    async with seat(served, page_id, None) as watcher:
        refused = await claim(watcher, 2, "w1")
        assert (refused["type"], refused["code"]) == ("error", "bad_token")
    anonymous = post(served, f"/api/pages/{page_id}/actions", {"action": {"type": "claim"}, "version": 2})
    assert anonymous.status_code == 401 and anonymous.json()["error"]["code"] == "bad_token"
    assert page_at(served, page_id)["version"] == 2
    # A finished page.
    assert act(served, page_id, seats["red"], {"type": "resign"}, 2).status_code == 200
    over = act(served, page_id, seats["red"], {"type": "claim"}, 3)
    assert over.status_code == 422 and over.json()["error"]["code"] == "illegal_action"
    assert page_at(served, page_id)["version"] == 3


def test_the_grace_is_a_bounded_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().live_absence_grace_s == 60.0
    monkeypatch.setenv("DOTFIGHT_LIVE_ABSENCE_GRACE_S", "2")
    assert Settings().live_absence_grace_s == 2.0
    for bad in ("0", "0.5", "3601", "nan", "soon"):
        monkeypatch.setenv("DOTFIGHT_LIVE_ABSENCE_GRACE_S", bad)
        with pytest.raises(ValidationError):
            Settings()


async def test_a_room_for_a_page_not_heard_moving_here_reads_its_last_move_from_the_store(
    served: Served,
) -> None:
    created = new_page(served)
    page_id, seats = created["id"], created["seats"]
    to_red(served, created)
    # As after a restart (or once forgotten): this process never heard the page move.
    served.services.rooms._recent_moves = RecentMoves()
    moved = await served.services.store.views.last_moved(page_id)
    assert moved is not None
    async with seat(served, page_id, seats["blue"]) as blue:
        first = await blue.receive_presence(WAIT_S)
        assert first["claim_at"] == iso_utc(moved.moved_at.timestamp() + GRACE_S)
