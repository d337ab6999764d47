"""A link page's reminder is stored (issue 19, item 2), with a controllable clock: a restart between the
move and the reminder still sends it, two processes coming back at once send it once, a later action of
the same move does not send it again, and a seat with the page open (on any process) is not pushed."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator

import pytest
from fastapi.testclient import TestClient

from dotfight.server.app import create_app
from dotfight.server.pages.authority import CreatePage, Seat
from dotfight.server.people.alarm import ManualClock
from dotfight.server.rooms import Rooms
from dotfight.server.settings import Settings
from dotfight.store.memory import MemoryPageStore
from tests.server.people.people_pages import SETUP, send
from tests.server.test_people_clocks_push import _drain, _link_page_both_subscribed, push_service
from tests.server.test_people_clocks_timeouts import POLL_S, START, Process, _until
from tests.support.push_service import PushService

__all__ = ["push_service"]  # the fixture, used by name

PER_MOVE_S = 3600
REMINDER_S = PER_MOVE_S * 0.8


async def _link_page(process: Process) -> str:
    """A link page with an hour per move, blue's first move made (its reminder waits)."""
    authority = process.authority
    created = await authority.create(CreatePage("quick", None, 7, "link", clock={"per_move_s": PER_MOVE_S}))
    page_id = created.page.meta.id
    page = await authority.page(page_id)
    await authority.act(page_id, Seat("blue"), {"type": "quick_setup"}, page.state.version, None)
    return page_id


async def test_a_restart_between_the_move_and_its_reminder_still_sends_it() -> None:
    store, clock = MemoryPageStore(), ManualClock(START)
    async with Process(store, clock) as before:
        page_id = await _link_page(before)
    assert before.reminded == []
    # The process that made the move is gone; the one that comes up knows the reminder from the store.
    async with Process(store, clock) as after:
        await clock.advance(REMINDER_S + 1)
        await _until(lambda: after.reminded, clock)
        [(reminded, side, left)] = after.reminded
        assert (reminded, side) == (page_id, "blue") and left == pytest.approx(PER_MOVE_S - REMINDER_S - 1)


async def test_two_processes_coming_back_at_once_send_the_reminder_once() -> None:
    store, clock = MemoryPageStore(), ManualClock(START)
    async with Process(store, clock) as before:
        page_ids = [await _link_page(before) for _ in range(5)]
    first, second = Process(store, clock), Process(store, clock)
    async with first, second:
        await clock.advance(REMINDER_S + 1)
        await _until(lambda: len(first.reminded) + len(second.reminded) >= len(page_ids), clock)
        for _ in range(5):  # and nothing more comes
            await clock.advance(10)
            await asyncio.sleep(0.001)
    told = [page_id for page_id, _, _ in first.reminded + second.reminded]
    assert sorted(told) == sorted(page_ids)  # each page once, by whichever process claimed it
    assert store.next_reminders(10) == []


async def test_a_later_action_of_the_same_move_does_not_send_it_again() -> None:
    store, clock = MemoryPageStore(), ManualClock(START)
    async with Process(store, clock) as process, Process(store, clock) as other:
        authority = process.authority
        created = await authority.create(
            CreatePage("quick", None, 7, "link", clock={"per_move_s": PER_MOVE_S})
        )
        page_id = created.page.meta.id
        for side, action in SETUP:  # set up: blue's first turn of play, its hour running
            page = await authority.page(page_id)
            await authority.act(page_id, Seat(side), action, page.state.version, None)
        await clock.advance(REMINDER_S + 1)
        await _until(lambda: process.reminded, clock)
        # Blue sends soldiers on the road (the same move: the deadline stays): no second reminder.
        page = await authority.page(page_id)
        await authority.act(page_id, Seat("blue"), send(page.state), page.state.version, None)
        for _ in range(5):
            await clock.advance(POLL_S)
            await asyncio.sleep(0.001)
        assert [(page, side) for page, side, _ in process.reminded + other.reminded] == [(page_id, "blue")]


@pytest.fixture
def push_client(
    make_settings: Callable[..., Settings], monkeypatch: pytest.MonkeyPatch
) -> Iterator[TestClient]:
    monkeypatch.setenv("DOTFIGHT_PUSH_INSECURE_ENDPOINTS", "1")  # the stand-in is plain http on loopback
    with TestClient(create_app(make_settings())) as client:
        yield client


def test_no_reminder_is_pushed_while_the_side_to_act_has_the_page_open(
    push_client: TestClient, push_service: PushService
) -> None:
    client = push_client
    state = client.app.state  # type: ignore[attr-defined]
    authority, timeouts = state.services.authority, state.timeouts
    opened, _ = _link_page_both_subscribed(client, push_service)
    away, phones = _link_page_both_subscribed(client, push_service)
    later = authority.now() + REMINDER_S + 5
    authority.now = lambda: later  # both pages' reminders are due
    with client.websocket_connect(f"/api/pages/{opened['id']}/ws") as socket:
        socket.send_json({"type": "hello", "token": opened["seats"]["blue"], "version": 0})
        assert socket.receive_json()["type"] == "state"
        client.portal.call(timeouts.poll)  # type: ignore[union-attr]
        for page in (opened, away):
            client.portal.call(timeouts._remind_now, page["id"])  # type: ignore[union-attr]
        _drain(client)
    [push] = push_service.wait_for(1)
    assert push.path.endswith("/push/blue")
    assert phones["blue"].read(push)["body"].startswith("A fifth of your time for this move is left")
    # Both reminders are spent: the open page's is not pushed later either.
    assert state.services.store.next_reminders(10) == []


class _OtherProcesses:
    """A broadcast whose other processes hold blue's seat of one page (as on PostgreSQL)."""

    other_processes = True

    def __init__(self, page_id: str) -> None:
        self.page_id = page_id

    def __getattr__(self, name: str) -> Callable[..., None]:
        return lambda *args: None  # the subscriptions a room registry makes

    async def remote_presence(self, page_id: str) -> tuple[bool, bool]:
        return (page_id == self.page_id, False)


async def test_a_seat_on_another_process_counts_as_the_page_open() -> None:
    rooms = Rooms(None, _OtherProcesses("there"))  # type: ignore[arg-type]
    assert await rooms.seats_anywhere("there") == (True, False)
    assert await rooms.seats_anywhere("elsewhere") == (False, False)
