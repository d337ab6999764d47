"""The rooms of this process: one per page with a socket here, made at its first hello and let go when
its last socket leaves; the caps on sockets per page and per client address; and the feeds that tell
rooms what happened elsewhere (this process's commits from the authority, the other processes' commits
and presence from the `Broadcast`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

from dotfight.server.broadcast import Broadcast
from dotfight.server.page_view import LoadedPage
from dotfight.server.pages.authority import Applied, PageAuthority
from dotfight.server.rooms.connection import NOBODY, Connection, PresenceKey, compact_json
from dotfight.server.rooms.room import Room

logger = logging.getLogger(__name__)


class Rooms:
    """The rooms by page id. `max_per_page` and `max_per_address` cap sockets (per process);
    `presence_delay` is how long presence changes are gathered before one broadcast."""

    def __init__(
        self,
        authority: PageAuthority,
        broadcast: Broadcast,
        max_per_page: int = 500,
        max_per_address: int = 500,
        presence_delay: float = 0.05,
    ) -> None:
        self._authority = authority
        self._broadcast = broadcast
        self._rooms: dict[str, Room] = {}
        self._addresses: Counter[str] = Counter()
        self.max_per_page = max_per_page
        self.max_per_address = max_per_address
        self._presence_delay = presence_delay
        self._presence_reads: set[asyncio.Task[None]] = set()
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

    def page_full(self, page_id: str, connection: Connection) -> bool:
        """Tells whether a connection not yet on the page would go over the page's cap."""
        room = self._rooms.get(page_id)
        return room is not None and room.full(connection, self.max_per_page)

    # -- what happened elsewhere

    def committed(self, page: LoadedPage, applied: Applied) -> None:
        """An authority listener: an action committed by this process (called under the page's lock)."""
        room = self._rooms.get(page.meta.id)
        if room is not None:
            room.committed(applied)

    def announced(self, page_id: str, version: int) -> None:
        """A broadcast subscriber: some process committed `version` of a page."""
        room = self._rooms.get(page_id)
        if room is not None:
            room.announced(version)

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
