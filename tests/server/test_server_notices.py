"""Another process's commit heard through its notice (issue 22, item 2): a whole notice's events message
reaches every socket of the page here as it is, with no read of the log; a bare one, or a version
missing before it, is read from the log; either way every socket hears every version once, in order.
The state in memory is advanced by the moves heard only when this process next decides an action of the
page, by the engine and with no read; and the payload falls back to bare when the move does not fit."""

from __future__ import annotations

import pytest
from test_server_rooms import META, PAGE, Log, Phone, joined, playing, settled

from dotfight.engine import State
from dotfight.server.broadcast import LocalBroadcast
from dotfight.server.page_view import LoadedPage
from dotfight.server.pages.authority import Applied, CreatePage, PageAuthority, Seat
from dotfight.server.pages.notice import (
    MAX_PAYLOAD_BYTES,
    CommitNotice,
    HeardMove,
    PendingNotices,
    notice_payload,
    parse_notice,
)
from dotfight.server.pages.wire import events_message
from dotfight.server.rooms import Connection, Rooms
from dotfight.store.memory import MemoryPageStore
from dotfight.store.records import LogEntry
from tests.support.players import nearest_snipe_action


class Heard(Log):
    """The authority as a room's registry sees it: the log (reads counted) and the moves it is handed."""

    def __init__(self, states: list[State]) -> None:
        super().__init__(states)
        self.handed: list[int] = []

    def heard(self, page_id: str, move: HeardMove) -> None:
        self.handed.append(move.version)


def whole(state: State, side: str = "blue") -> CommitNotice:
    """The whole notice of the move that made `state`, as its process would NOTIFY it."""
    message = events_message(state.version, Applied.sent(state, state.version, [{"type": "relayed"}]).events)
    move = HeardMove(state.version, side, {"type": "flick"}, state.actor, None)
    notice = parse_notice(notice_payload(PAGE, move, message))
    assert notice is not None and notice.whole
    return notice


async def test_a_whole_notice_reaches_every_socket_as_it_is_with_no_read_of_the_log() -> None:
    states = playing(2)
    log = Heard(states)
    rooms = Rooms(log, LocalBroadcast(), presence_delay=0)  # type: ignore[arg-type]
    phones = [await joined(rooms, states[0]) for _ in range(3)]
    for state in states[1:]:
        rooms.announced(whole(state))
    await settled()
    start = states[0].version
    assert [phone.versions() for phone in phones] == [[start + 1, start + 2]] * 3
    assert phones[0].heard[-1]["events"][-1]["type"] == "relayed"
    assert "options" in phones[0].heard[-1]["events"][-1]  # the turn's options, as the notice carried them
    assert log.reads == 0
    assert log.handed == [start + 1, start + 2]  # kept for the state in memory
    # Heard again (this process's own, echoed back, or a repeat): nothing more.
    rooms.announced(whole(states[2]))
    await settled()
    assert phones[0].versions() == [start + 1, start + 2] and log.reads == 0


async def test_a_bare_notice_or_a_version_missing_before_a_whole_one_is_read_from_the_log_once() -> None:
    states = playing(4)
    log = Heard(states[:3])
    rooms = Rooms(log, LocalBroadcast(), presence_delay=0)  # type: ignore[arg-type]
    phones = [await joined(rooms, states[0]) for _ in range(2)]
    start = states[0].version
    rooms.announced(CommitNotice(PAGE, start + 1))  # too long to carry the move
    await settled()
    assert log.reads == 1 and phones[0].versions() == [start + 1, start + 2]  # the log held +2 already
    # +3 is missed (a dropped LISTEN connection); +4 arrives whole: the gap is read from the log.
    log.states = states
    rooms.announced(whole(states[4]))
    await settled()
    assert log.reads == 2
    assert [phone.versions() for phone in phones] == [[start + 1, start + 2, start + 3, start + 4]] * 2
    assert phones[0].heard[-1]["events"][0]["type"] == "logged"  # read, not the notice's


async def test_a_whole_notice_heard_while_a_hello_holds_the_room_waits_and_is_delivered_once_in_order() -> (
    None
):
    states = playing(2)
    log = Heard(states)
    rooms = Rooms(log, LocalBroadcast(), presence_delay=0)  # type: ignore[arg-type]
    first = await joined(rooms, states[0])
    second = Phone()
    async with rooms.entering(PAGE) as room:
        rooms.announced(whole(states[1]))
        rooms.announced(whole(states[2]))
        await settled()
        assert first.versions() == []
        rooms.join(room, Connection(second, queue_size=64), LoadedPage(META, states[0]), (False, False))  # type: ignore[arg-type]
    await settled()
    start = states[0].version
    assert first.versions() == second.versions() == [start + 1, start + 2]
    assert log.reads == 0


async def test_a_page_with_no_socket_here_costs_its_notices_nothing() -> None:
    states = playing(1)
    log = Heard(states)
    rooms = Rooms(log, LocalBroadcast(), presence_delay=0)  # type: ignore[arg-type]
    rooms.announced(whole(states[1]))
    await settled()
    assert log.reads == 0 and log.handed == []


def test_a_move_that_does_not_fit_in_a_notify_goes_bare() -> None:
    move = HeardMove(9, "red", {"type": "flick", "dx": 1.5}, "blue", {"since": 1.0})
    fits = notice_payload("p1", move, "x" * 7000)
    assert parse_notice(fits) == CommitNotice("p1", 9, fits.split(" ", 2)[2])
    assert parse_notice(fits).move() == move  # type: ignore[union-attr]
    assert notice_payload("p1", move, "x" * MAX_PAYLOAD_BYTES) == "p1 9"
    # Bytes count, not characters: 2,700 three-byte characters are 8,100 bytes.
    assert notice_payload("p1", move, "墨" * 2700) == "p1 9"
    assert len(notice_payload("p1", move, "墨" * 2500).encode()) <= MAX_PAYLOAD_BYTES


class Counted(MemoryPageStore):
    """The in-memory store, counting the reads of the log and of versions."""

    def __init__(self) -> None:
        super().__init__()
        self.reads = 0

    def log(self, page_id: str, after: int, up_to: int | None = None) -> list[LogEntry]:
        self.reads += 1
        return super().log(page_id, after, up_to)

    def version(self, page_id: str) -> int:
        self.reads += 1
        return super().version(page_id)


class Kept(PendingNotices):
    """The notices handed to the NOTIFY hook, kept (the in-memory store has no NOTIFY)."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[str] = []

    def hand(self, page_id: str, version: int, payload: str) -> None:
        self.sent.append(payload)
        super().hand(page_id, version, payload)


async def test_moves_heard_advance_the_state_in_memory_when_the_next_action_is_decided_with_no_read() -> None:
    store = Counted()
    here, there = PageAuthority(store), PageAuthority(store)
    there.notices = notices = Kept()
    here.notices = PendingNotices()  # both on PostgreSQL
    try:
        created = await there.create(CreatePage(preset="quick", rules=None, seed=5, mode="local"))
        page_id = created.page.meta.id
        page = await here.page(page_id)  # in memory here too
        for _ in range(3):  # made there, heard here
            page = await there.page(page_id)
            await there.act(
                page_id, Seat(None), nearest_snipe_action(page.public_snapshot()), page.state.version, None
            )
        assert len(there.notices) == 0  # each payload let go once written
        for payload in notices.sent:
            notice = parse_notice(payload)
            assert notice is not None and notice.whole
            here.heard(page_id, notice.move())
        page = await there.page(page_id)
        reads = store.reads
        applied = await here.act(page_id, Seat(None), nearest_snipe_action(page.public_snapshot()), 3, None)
        assert applied.version == 4
        assert store.reads == reads  # decided on the loop, its state advanced by the three moves heard
        assert (await here.page(page_id)).state.to_json() == (await there.page(page_id)).state.to_json()
    finally:
        here.close()
        there.close()


def test_notices_pending_until_written() -> None:
    notices = PendingNotices()
    notices.hand("p", 3, "p 3 {}\n{}")
    assert notices.payload("p", 3) == "p 3 {}\n{}"
    assert notices.payload("p", 4) == "p 4"
    notices.drop("p", 3)
    assert notices.payload("p", 3) == "p 3" and len(notices) == 0


class Refusing(MemoryPageStore):
    """An in-memory store that refuses every action's write before queueing it (a closed writer)."""

    def append_then(self, *args: object) -> None:
        raise RuntimeError("the writer is closed")


async def test_a_write_refused_before_it_was_queued_lets_its_notice_go() -> None:
    authority = PageAuthority(Refusing())
    authority.notices = PendingNotices()
    try:
        page = (await authority.create(CreatePage(preset="quick", rules=None, seed=5, mode="local"))).page
        with pytest.raises(RuntimeError):
            await authority.act(
                page.meta.id, Seat(None), nearest_snipe_action(page.public_snapshot()), 0, None
            )
        assert len(authority.notices) == 0
    finally:
        authority.close()
