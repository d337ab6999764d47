"""The rooms of this process: one per page with a socket here, made at its first hello and let go when
its last socket leaves; the caps on sockets per page and per client address; and the feeds that tell
rooms what happened elsewhere (this process's commits from the authority, the other processes' commits
and presence from the `Broadcast`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol

from dotfight.server.broadcast import Broadcast
from dotfight.server.page_view import LoadedPage
from dotfight.server.pages.authority import Applied, PageAuthority
from dotfight.server.pages.notice import CommitNotice
from dotfight.server.pages.wire import compact_json
from dotfight.server.people.absence import DEFAULT_GRACE_S
from dotfight.server.rooms.absence import (
    AbsenceFacts,
    RecentMoves,
    RoomAbsence,
    held,
    seeded_departures,
    side_to_act,
)
from dotfight.server.rooms.connection import NOBODY, Connection, PresenceKey
from dotfight.server.rooms.room import Room
from dotfight.store.records import PageMoved

logger = logging.getLogger(__name__)


class PageMoves(Protocol):
    """Where a live page's last move is read (the store's views)."""

    async def last_moved(self, page_id: str) -> PageMoved | None:
        """Returns when a page last moved and its stored clock state (None: no such page)."""
        ...


class Rooms:
    """The rooms by page id. `max_per_page` and `max_per_address` cap sockets (per process);
    `presence_delay` is how long presence changes are gathered before one broadcast. A live page's
    room keeps its absence (`rooms/absence.py`): `moves` is where a new room reads when the page last
    moved, `absence_grace_s` the grace before a claim, `now` the clock (`started_at`: when it began)."""

    def __init__(
        self,
        authority: PageAuthority,
        broadcast: Broadcast,
        max_per_page: int = 500,
        max_per_address: int = 500,
        presence_delay: float = 0.05,
        *,
        moves: PageMoves | None = None,
        absence_grace_s: float = DEFAULT_GRACE_S,
        now: Callable[[], float] = time.time,
    ) -> None:
        self._authority = authority
        self._broadcast = broadcast
        self._rooms: dict[str, Room] = {}
        self._addresses: Counter[str] = Counter()
        self.max_per_page = max_per_page
        self.max_per_address = max_per_address
        self._presence_delay = presence_delay
        self._presence_reads: set[asyncio.Task[None]] = set()
        self._moves = moves
        self._recent_moves = RecentMoves()
        self.absence_grace_s = absence_grace_s
        self.now = now
        self.started_at = now()
        broadcast.subscribe(self.announced)
        broadcast.on_reconnect(self.catch_up_all)
        broadcast.subscribe_presence(self.set_remote_presence)
        broadcast.subscribe_notices(self.heard_notice)

    # -- admission

    def admit(self, address: str) -> bool:
        """Counts one more socket from `address`; False (counting nothing) when it is at its cap."""
        if self._addresses[address] >= self.max_per_address:
            return False
        self._addresses[address] += 1
        return True

    def release(self, address: str) -> None:
        """Forgets one socket of `address` (counted by `admit`)."""
        self._addresses[address] -= 1
        if self._addresses[address] <= 0:
            del self._addresses[address]

    # -- joining and leaving

    @contextlib.asynccontextmanager
    async def entering(self, page_id: str) -> AsyncIterator[Room]:
        """Holds the page's room (made if new) for a hello: it reads the page, tells its client, and
        joins; a hello that fails leaves no empty room behind."""
        room = self._rooms.get(page_id)
        if room is None:
            room = self._rooms[page_id] = Room(
                page_id, self._authority, self._presence_delay, self._broadcast.share_presence
            )
        room.entering += 1
        try:
            # Heard from here on (another process's commits, on PostgreSQL): the hello's read after it
            # misses nothing.
            await self._broadcast.follow(page_id)
            async with room.held():
                yield room
        finally:
            room.entering -= 1
            self._drop_if_empty(room)

    async def remote_seats(self, room: Room) -> PresenceKey:
        """The seats other processes hold on a room's page, read for its first socket."""
        if room.version is not None or not self._broadcast.other_processes:
            return NOBODY  # a room with sockets keeps them up to date itself; one process: nobody else
        return await self._broadcast.remote_presence(room.page_id)

    async def read_absence(self, room: Room, page: LoadedPage) -> None:
        """Gives a live page's room its absence before its first socket joins (call inside `entering`):
        when the page last moved and when each seat last left, so the first presence carries claim_at."""
        if room.version is not None or room.absence is not None or page.meta.mode != "live":
            return
        page_id = page.meta.id
        heard = self._recent_moves.take(page_id)
        moved_at = self.now() if heard is None else heard
        departures: dict[str, float] = {}
        # Another process's moves of a page with no room here are not heard (broadcast.follow): with
        # other processes the stored move is read even when this one heard of an older one.
        read_move = heard is None or self._broadcast.other_processes
        if not page.over:
            try:
                departures = await self._broadcast.departures(page_id)
                if read_move and self._moves is not None:
                    moved = await self._moves.last_moved(page_id)
                    if moved is not None:
                        stored = moved.moved_at.timestamp()
                        moved_at = stored if heard is None else max(heard, stored)
            except Exception:  # counted from now: later, never earlier, than it should
                logger.warning("page %s: could not read its absence", page_id, exc_info=True)
        left_at = seeded_departures(departures, self.started_at)
        room.absence = RoomAbsence(page.state, moved_at, left_at, self.absence_grace_s, self.now)

    async def absence_facts(self, page: LoadedPage, moved: PageMoved | None) -> AbsenceFacts | None:
        """Returns what a claim against the side to act of a live page is decided on (None: over): from
        the page's room here when it has one (what its sockets were told), else from the broadcast
        (presence and departures across processes) and `moved` (the page's last move as stored)."""
        actor = side_to_act(page.state)
        if actor is None:
            return None
        stored_move = self.now() if moved is None else moved.moved_at.timestamp()
        stored_move = max(stored_move, self._recent_moves.known(page.meta.id) or stored_move)
        room = self._rooms.get(page.meta.id)
        absence = None if room is None or room.version is None else room.absence
        if room is not None and absence is not None:
            # The stored move may be newer than what the room heard (another process's, on its way).
            moved_at = max(absence.moved_at, stored_move)
            return AbsenceFacts(held(room.presence(), actor), moved_at, absence.left_at.get(actor))
        present = held(await self._broadcast.remote_presence(page.meta.id), actor)
        left_at = seeded_departures(await self._broadcast.departures(page.meta.id), self.started_at)
        return AbsenceFacts(present, stored_move, left_at[actor])

    def join(self, room: Room, connection: Connection, page: LoadedPage, remote: PresenceKey) -> None:
        """Joins a connection to its room at `page`'s version (call inside `entering`)."""
        first = room.version is None
        bot = page.bot
        always = frozenset({bot.side}) if bot is not None else frozenset()
        room.join(connection, always, page.state.version, remote)
        if first and self._broadcast.other_processes:
            # A commit or a presence change heard before the room's first socket joined found nobody
            # here to tell: the log and the presence are read once more after the join.
            room.catch_up()
            self._spawn_presence_read(room)

    def leave(self, page_id: str, connection: Connection) -> None:
        """Removes a connection from its room (the others hear of it if the presence changed)."""
        room = self._rooms.get(page_id)
        if room is not None:
            room.leave(connection)
            self._drop_if_empty(room)

    def _drop_if_empty(self, room: Room) -> None:
        if room.empty and self._rooms.get(room.page_id) is room:
            del self._rooms[room.page_id]
            room.close()
            self._broadcast.unfollow(room.page_id)
            if room.absence is not None:  # its next room starts from what this one heard
                self._recent_moves.record(room.page_id, room.absence.moved_at)

    def page_full(self, page_id: str, connection: Connection) -> bool:
        """Tells whether a connection not yet on the page would go over the page's cap."""
        room = self._rooms.get(page_id)
        return room is not None and room.full(connection, self.max_per_page)

    # -- what happened elsewhere

    def committed(self, page: LoadedPage, applied: Applied) -> None:
        """An authority listener: an action committed by this process (called under the page's lock)."""
        room = self._rooms.get(page.meta.id)
        if room is not None:
            room.saw(page)
            room.committed(applied)
        elif page.meta.mode == "live":
            self._recent_moves.record(page.meta.id, self.now())

    def write_unsure(self, page_id: str) -> None:
        """An authority hook: this process's write of a page failed and may have committed all the same
        (the database's connection lost as the commit went out). Its own notice is not handed to the
        rooms here (broadcast.py), so the room reads the log for it."""
        room = self._rooms.get(page_id)
        if room is not None and room.version is not None:
            room.catch_up()

    def announced(self, notice: CommitNotice) -> None:
        """A broadcast subscriber: another process committed a version of a page followed here. A room
        forwards a whole notice's events to its sockets as they are and keeps its move for the state in
        memory, or reads the log for a bare one. With no room of the page (gone while its UNLISTEN is
        on its way) nothing is done for it: its state in memory, if any, is advanced from the log if
        this process ever decides an action of it."""
        page_id = notice.page_id
        room = self._rooms.get(page_id)
        if room is None:  # a commit of any mode: the notice does not say
            self._recent_moves.record(page_id, self.now())
            return
        if room.version is None or notice.version <= room.version:
            return  # its first socket reads the page after joining; or heard already (read from the log)
        if not notice.whole:
            room.announced(notice.version)
            return
        try:
            move = notice.move()
        except (ValueError, KeyError, TypeError):
            logger.warning("page %s: a malformed notice of version %d", page_id, notice.version)
            room.announced(notice.version)
            return
        self._authority.heard(page_id, move)
        room.relayed(move, notice.message())

    def set_remote_presence(self, page_id: str, seats: PresenceKey) -> None:
        """A broadcast subscriber: the seats other processes hold on a page changed."""
        room = self._rooms.get(page_id)
        if room is not None:
            room.set_remote_presence(seats)

    def tell(self, page_id: str, message: dict[str, Any]) -> None:
        """Tells every socket of a page, on every process, a message that is not a commit (a rematch's
        standing, a phrase said): this process's room at once, the others through the broadcast."""
        text = compact_json(message)
        self.heard_notice(page_id, text)
        self._broadcast.tell(page_id, text)

    def heard_notice(self, page_id: str, text: str) -> None:
        """A broadcast subscriber (and `tell`'s own delivery): a message for the page's sockets here."""
        room = self._rooms.get(page_id)
        if room is not None:
            room.broadcast(text)

    async def catch_up_all(self) -> None:
        """After a dropped LISTEN connection: every room catches up, and its presence is re-read."""
        for room in list(self._rooms.values()):
            if room.version is not None:
                room.catch_up()
                await self._read_presence(room)

    def _spawn_presence_read(self, room: Room) -> None:
        task = asyncio.get_running_loop().create_task(self._read_presence(room))
        self._presence_reads.add(task)
        task.add_done_callback(self._presence_reads.discard)

    async def _read_presence(self, room: Room) -> None:
        try:
            room.set_remote_presence(await self._broadcast.remote_presence(room.page_id))
        except Exception:
            logger.warning("page %s: could not read presence", room.page_id, exc_info=True)

    # -- views and shutdown

    async def seats_anywhere(self, page_id: str) -> PresenceKey:
        """Which seats have a socket on a page on any process: its room's here, else the other processes'."""
        room = self._rooms.get(page_id)
        if room is not None and room.version is not None:
            return room.presence()
        return await self._broadcast.remote_presence(page_id) if self._broadcast.other_processes else NOBODY

    def presence(self, page_id: str) -> dict[str, object]:
        """Returns the `{type: "presence", blue, red}` message of a page."""
        room = self._rooms.get(page_id)
        blue, red = room.presence() if room is not None and room.version is not None else NOBODY
        return {"type": "presence", "blue": blue, "red": red}

    def close_page(self, page_id: str, message: dict[str, Any], code: int, reason: str = "") -> None:
        """Sends `message` to every connection of a page, then closes them with `code`."""
        room = self._rooms.get(page_id)
        if room is not None:
            room.close_all(message, code, reason)

    def stop(self) -> None:
        """Cancels the catch-ups under way."""
        for room in self._rooms.values():
            room.stop()

    async def close_all(self, code: int) -> None:
        """Closes every connection (at shutdown)."""
        for room in list(self._rooms.values()):
            for connection in list(room.connections):
                await connection.close_now(code)
