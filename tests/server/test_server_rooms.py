"""A page's room keeps its sockets' order itself: a commit told while a hello or a catch-up holds the room
waits and is delivered after, once and in order; a commit after a gap is read from the log once for all
its sockets; a room is made at its first hello and let go with its last socket (or a failed hello)."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Any

from starlette.websockets import WebSocketState

from dotfight.engine import State, apply
from dotfight.server.broadcast import LocalBroadcast
from dotfight.server.page_view import LoadedPage
from dotfight.server.pages.authority import Applied
from dotfight.server.pages.notice import CommitNotice
from dotfight.server.rooms import NOBODY, Connection, PresenceKey, Rooms
from dotfight.store.records import PageRecord
from tests.support.pages import engine_page_ready_to_play
from tests.support.players import nearest_snipe_action

PAGE = "room0001"
META = PageRecord(PAGE, "link", "quick", {}, "0" * 32, "0" * 64, None, datetime.now(UTC))


class Phone:
    """A WebSocket that keeps what it is sent."""

    application_state = WebSocketState.CONNECTED

    def __init__(self) -> None:
        self.heard: list[dict[str, Any]] = []

    async def send_text(self, text: str) -> None:
        self.heard.append(json.loads(text))

    def versions(self) -> list[int]:
        return [message["version"] for message in self.heard if message["type"] == "events"]


class Log:
    """The authority as a room reads it: the log's events after a version (counting the reads)."""

    def __init__(self, states: list[State]) -> None:
        self.states = states
        self.reads = 0

    def _batches(self, after: int, up_to: int) -> list[list[dict[str, Any]]]:
        return [[{"type": "logged", "version": version}] for version in range(after + 1, up_to + 1)]

    async def events_since(
        self, page_id: str, after: int, up_to: int | None = None
    ) -> list[list[dict[str, Any]]]:
        self.reads += 1
        return self._batches(after, self.states[-1].version if up_to is None else up_to)

    async def caught_up(self, page_id: str, heard: int) -> tuple[LoadedPage, list[list[dict[str, Any]]]]:
        self.reads += 1
        return LoadedPage(META, self.states[-1]), self._batches(heard, self.states[-1].version)


class Sharing(LocalBroadcast):
    """One process that keeps what its rooms shared of their seats."""

    def __init__(self) -> None:
        self.shared: list[tuple[str, PresenceKey]] = []

    def share_presence(self, page_id: str, seats: tuple[bool, bool]) -> None:
        self.shared.append((page_id, seats))


def playing(moves: int) -> list[State]:
    """The states of a page ready to play, then after each of `moves` moves of the side to act."""
    states = [engine_page_ready_to_play()]
    for _ in range(moves):
        state = states[-1]
        states.append(apply(state, state.actor or "blue", nearest_snipe_action(state.snapshot()))[0])
    return states


def applied(state: State) -> Applied:
    return Applied.sent(state, state.version, [{"type": "made", "version": state.version}])


async def settled() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def joined(rooms: Rooms, state: State, seat: str | None = None) -> Phone:
    phone = Phone()
    connection = Connection(phone, queue_size=64)  # type: ignore[arg-type]
    connection.seat = seat
    async with rooms.entering(PAGE) as room:
        rooms.join(room, connection, LoadedPage(META, state), NOBODY)
    return phone


async def test_commits_told_while_a_hello_holds_the_room_reach_every_socket_after_it_once_in_order() -> None:
    states = playing(3)
    log = Log(states)
    rooms = Rooms(log, LocalBroadcast(), presence_delay=0)  # type: ignore[arg-type]
    first = await joined(rooms, states[0])
    second = Phone()
    async with rooms.entering(PAGE) as room:
        # The hello has read the page at its version; two moves commit before it joins.
        rooms.committed(LoadedPage(META, states[1]), applied(states[1]))
        rooms.committed(LoadedPage(META, states[2]), applied(states[2]))
        await settled()
        assert first.versions() == []  # held: nobody hears a version the joiner might miss
        rooms.join(room, Connection(second, queue_size=64), LoadedPage(META, states[0]), NOBODY)  # type: ignore[arg-type]
    rooms.committed(LoadedPage(META, states[3]), applied(states[3]))
    await settled()
    start = states[0].version
    assert first.versions() == second.versions() == [start + 1, start + 2, start + 3]
    assert log.reads == 0  # every one of them was this process's own commit: no read of the log
    assert "options" in first.heard[-1]["events"][-1]


async def test_a_commit_after_a_gap_is_read_from_the_log_once_for_all_sockets_in_order() -> None:
    states = playing(3)
    log = Log(states)
    rooms = Rooms(log, LocalBroadcast(), presence_delay=0)  # type: ignore[arg-type]
    phones = [await joined(rooms, states[0]) for _ in range(3)]
    # Versions +1 and +2 were another process's (not told here); +3 is ours, and shows the gap.
    rooms.committed(LoadedPage(META, states[3]), applied(states[3]))
    await settled()
    start = states[0].version
    assert [phone.versions() for phone in phones] == [[start + 1, start + 2, start + 3]] * 3
    assert log.reads == 1
    # An announcement of a version already heard (our own, echoed back) reads nothing.
    rooms.announced(CommitNotice(PAGE, states[3].version))
    await settled()
    assert log.reads == 1


async def test_the_room_goes_with_its_last_socket_and_the_others_hear_it_holds_no_seat() -> None:
    states = playing(0)
    broadcast = Sharing()
    rooms = Rooms(Log(states), broadcast, presence_delay=0)  # type: ignore[arg-type]
    phone = Phone()
    connection = Connection(phone, queue_size=64)  # type: ignore[arg-type]
    connection.seat = "blue"
    async with rooms.entering(PAGE) as room:
        rooms.join(room, connection, LoadedPage(META, states[0]), NOBODY)
    await asyncio.sleep(0.01)  # the presence delay
    assert broadcast.shared == [(PAGE, (True, False))]
    assert rooms.presence(PAGE) == {"type": "presence", "blue": True, "red": False}
    rooms.leave(PAGE, connection)
    assert broadcast.shared == [(PAGE, (True, False)), (PAGE, NOBODY)]
    assert rooms.presence(PAGE) == {"type": "presence", "blue": False, "red": False}
    # A page with no socket here has no room: a commit of it is told to nobody, and costs nothing.
    rooms.committed(LoadedPage(META, states[0]), applied(states[0]))


async def test_a_hello_that_fails_leaves_no_room_and_the_next_joiner_starts_afresh() -> None:
    states = playing(1)
    rooms = Rooms(Log(states), LocalBroadcast(), presence_delay=0)  # type: ignore[arg-type]
    try:
        async with rooms.entering(PAGE):
            rooms.committed(LoadedPage(META, states[1]), applied(states[1]))
            raise LookupError("the hello was refused")
    except LookupError:
        pass
    assert rooms.page_full(PAGE, Connection(Phone(), queue_size=1)) is False  # type: ignore[arg-type]
    phone = await joined(rooms, states[1])  # joins at the page as it stands, the commit in its snapshot
    await settled()
    assert phone.versions() == []
    assert [message["type"] for message in phone.heard] == ["presence"]


class Following(LocalBroadcast):
    """A broadcast as on PostgreSQL, as far as a room registry follows pages: it keeps every follow and
    unfollow, and a follow finishes only when the test lets it (the LISTEN's round trip)."""

    other_processes = True

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, str]] = []
        self.listening = asyncio.Event()

    async def follow(self, page_id: str) -> None:
        self.calls.append(("follow", page_id))
        await self.listening.wait()

    def unfollow(self, page_id: str) -> None:
        self.calls.append(("unfollow", page_id))


async def test_a_room_follows_its_page_before_its_first_hello_reads_it_and_stops_when_it_goes() -> None:
    """On PostgreSQL a process hears a page's commits only while it holds a room of it: the hello reads
    the page only once the follow is done (a commit after it is heard; one before it is in what the
    hello reads), and the room's going stops it."""
    states = playing(0)
    broadcast = Following()
    rooms = Rooms(Log(states), broadcast, presence_delay=0)  # type: ignore[arg-type]
    connection = Connection(Phone(), queue_size=64)  # type: ignore[arg-type]
    entered = asyncio.Event()

    async def hello() -> None:
        async with rooms.entering(PAGE) as room:
            entered.set()
            rooms.join(room, connection, LoadedPage(META, states[0]), NOBODY)

    task = asyncio.create_task(hello())
    await settled()
    assert broadcast.calls == [("follow", PAGE)]
    assert not entered.is_set()  # not before PostgreSQL listens
    broadcast.listening.set()
    await task
    assert entered.is_set()
    rooms.leave(PAGE, connection)
    assert broadcast.calls == [("follow", PAGE), ("unfollow", PAGE)]


async def test_a_write_whose_outcome_is_unknown_makes_the_room_read_the_log() -> None:
    """This process's own notices are not handed to its rooms on PostgreSQL: a write that failed with the
    database unavailable may have committed all the same, so its room reads the log (and hears it)."""
    states = playing(1)
    log = Log(states)
    broadcast = Following()
    broadcast.listening.set()
    rooms = Rooms(log, broadcast, presence_delay=0)  # type: ignore[arg-type]
    phone = await joined(rooms, states[0])
    await settled()
    reads = log.reads  # the first socket's read after joining (other processes may have moved it)
    rooms.write_unsure(PAGE)
    await settled()
    assert log.reads == reads + 1
    assert phone.versions() == [states[1].version]
    rooms.write_unsure("elsewhere")  # no room here: nothing to read
    await settled()
    assert log.reads == reads + 1
