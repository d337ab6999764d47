"""One page's live state in this process: a `Room`.

A room holds its page's sockets (counted per seat), the version they have all heard, presence, and
catching up with the log, and keeps them in order with its own lock. Every socket of a page, on whichever
process, hears every action of its page once, in order: an action committed here is told to the room
under the authority's page lock (so in version order) and delivered at once when it is the next version
(the usual case, no database read); a version the room cannot deliver at once (another process's commit,
heard through the `Broadcast`, or ours after a gap) makes the room read the missing log entries ONCE for
all its sockets and deliver them in order.

The room's lock is held while a hello or a catch-up reads the store and changes what the sockets heard;
an action committed meanwhile waits in the room (`_waiting`) and is delivered, in order, when the lock is
let go. So no socket hears a version twice or skips one, and a joiner misses nothing between what it
is told and its joining the room.

Presence costs O(1) per join or leave: the room counts its connections per seat, a joining connection is
told the presence once, and the others hear of it only when it changes, gathered over a short delay (a
thousand watchers arriving cause no presence broadcast at all; a seat arriving causes one). Presence is
this process's seats together with the seats the other processes hold (`set_remote_presence`) and the
bot's; this process's own seats are handed to `share` when they change, to be told to the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from collections.abc import AsyncIterator, Callable
from typing import Any

from dotfight.server.page_view import LoadedPage
from dotfight.server.pages.authority import Applied, PageAuthority
from dotfight.server.pages.errors import PageError
from dotfight.server.pages.notice import HeardMove
from dotfight.server.pages.wire import events_message, text_frame
from dotfight.server.rooms.absence import RoomAbsence
from dotfight.server.rooms.connection import NOBODY, Connection, PresenceKey, presence_message
from dotfight.store.records import StoreUnavailable

logger = logging.getLogger(__name__)

# A catch-up that fails (the database busy or away) is tried again this many times, this far apart.
CATCH_UP_TRIES = 5
CATCH_UP_PAUSE_S = 0.5

# Told (page_id, seats) when this process's own seats on a page change (after the presence delay).
ShareSeats = Callable[[str, PresenceKey], None]


class Room:
    """One page's sockets here, the version they have all heard (`version`, None until the first joins),
    presence, and catching up with the log.

    What the page is waiting for belongs here too, and comes next (issue 19): the page's clock, its
    absence timer, its rematch offer and its phrases. The room calls `changed()` each time the heard
    version or the presence moved; such a feature keeps its state on the room and (re)arms or cancels its
    timers from `changed()`, reading `version`, `presence()` and `connections`, and tells the sockets with
    `broadcast`; `close()` (the last socket gone) is where its timers stop.
    """

    __slots__ = (
        "_again",
        "_announced",
        "_authority",
        "_delay",
        "_flush",
        "_must_read",
        "_share",
        "_task",
        "_waiting",
        "absence",
        "always_present",
        "closed",
        "connections",
        "entering",
        "lock",
        "page_id",
        "remote",
        "seats",
        "sent",
        "shared",
        "version",
    )

    def __init__(
        self, page_id: str, authority: PageAuthority, presence_delay: float, share: ShareSeats
    ) -> None:
        self.page_id = page_id
        self._authority = authority
        self._delay = presence_delay
        self._share = share
        self.connections: dict[Connection, str | None] = {}
        self.seats: Counter[str] = Counter()
        self.always_present: frozenset[str] = frozenset()
        # The version every connection here has heard (the next to hear is version + 1).
        self.version: int | None = None
        # The seats other processes hold here, and this process's seats as last shared with them.
        self.remote: PresenceKey = NOBODY
        self.shared: PresenceKey = NOBODY
        # The presence last told to the room; each joiner is told the presence itself on arrival.
        self.sent: PresenceKey = NOBODY
        self._flush: asyncio.TimerHandle | None = None
        # Held by a hello or a catch-up; the events messages of actions committed meanwhile, by version.
        self.lock = asyncio.Lock()
        self._waiting: dict[int, str] = {}
        self.entering = 0  # hellos under way (the room is kept while one is)
        # The catch-up under way, whether it must read once more, the newest version a NOTIFY announced
        # (read only while the sockets have not heard it: this process's own commit is often announced
        # back to it after it was delivered), and whether the log must be read whatever they heard.
        self._task: asyncio.Task[None] | None = None
        self._again = False
        self._announced = 0
        self._must_read = False
        self.closed = False
        # A live page's absence (its claim_at rides on the presence message); None for other modes.
        self.absence: RoomAbsence | None = None

    # -- what the page waits for

    def changed(self) -> None:
        """Called after the heard version or the presence moved: the place for what the page is waiting
        for (issue 19's clock, absence timer, rematch offer and phrases)."""
        if self.absence is not None and self.absence.moved_on(self.presence()):
            self._presence_may_have_changed()  # claim_at moved: told with the presence

    def saw(self, page: LoadedPage) -> None:
        """A state of the page was heard (committed here, or read from the log): what waits on it learns."""
        if self.absence is not None:
            self.absence.saw(page.state)

    def _presence_text(self, presence: PresenceKey) -> str:
        """The presence message (a live page's carries its claim_at)."""
        if self.absence is None:
            return presence_message(presence)
        return self.absence.message(presence)

    # -- holding the room

    @contextlib.asynccontextmanager
    async def held(self) -> AsyncIterator[Room]:
        """Holds the room's lock; commits told meanwhile are delivered in order when it is let go."""
        async with self.lock:
            yield self
        self._deliver_waiting()

    @property
    def empty(self) -> bool:
        """Tells whether no socket is here and no hello is on its way in."""
        return not self.connections and self.entering == 0

    # -- sockets and presence

    def full(self, connection: Connection, max_per_page: int) -> bool:
        """Tells whether a connection not yet here would go over the page's cap."""
        return connection not in self.connections and len(self.connections) >= max_per_page

    def local(self) -> PresenceKey:
        """Returns which seats this process's sockets hold here."""
        both = self.seats["both"] > 0
        return both or self.seats["blue"] > 0, both or self.seats["red"] > 0

    def presence(self) -> PresenceKey:
        """Returns which seats are here: on this process, on the others, or the bot's."""
        blue, red = self.local()
        blue = blue or self.remote[0] or "blue" in self.always_present
        red = red or self.remote[1] or "red" in self.always_present
        return blue, red

    def join(
        self, connection: Connection, always_present: frozenset[str], version: int, remote: PresenceKey
    ) -> None:
        """Adds a connection with its `seat` (again after a resync hello: its seat may have changed),
        tells it the presence, and tells the others if the presence changed (call holding the room).

        `version` is what the connection was told (the sockets here must have heard just as much, see
        `bring_up_to`); `always_present` and `remote` (the seats other processes hold) are read for the
        room's first socket."""
        if self.version is None:
            self.version = version
            self.always_present = always_present
            self.remote = remote
            self.sent = self.presence()
            if self.absence is not None:
                self.absence.told = self.absence.claim_at(self.sent)
        elif self.version != version:
            message = f"page {self.page_id}: joining at version {version}, its sockets at {self.version}"
            raise RuntimeError(message)
        previous = self.connections.get(connection)
        if previous is not None:
            self.seats[previous] -= 1
        self.connections[connection] = connection.seat
        if connection.seat is not None:
            self.seats[connection.seat] += 1
        connection.send(self._presence_text(self.presence()))
        self._presence_may_have_changed()

    def leave(self, connection: Connection) -> None:
        """Removes a connection (the others hear of it if the presence changed)."""
        if connection not in self.connections:
            return
        seat = self.connections.pop(connection)
        if seat is not None:
            self.seats[seat] -= 1
        if self.connections:
            self._presence_may_have_changed()

    def close(self) -> None:
        """Lets the room go (its last socket left): its timers stop and the other processes hear that
        this one holds no seat here."""
        self.closed = True
        if self._flush is not None:
            self._flush.cancel()
        if self.shared != NOBODY:
            self._share(self.page_id, NOBODY)

    def set_remote_presence(self, seats: PresenceKey) -> None:
        """Records which seats other processes hold here (ignored before the first socket: it reads
        them on joining)."""
        if self.version is None or self.remote == seats:
            return
        self.remote = seats
        self._presence_may_have_changed()

    def _presence_may_have_changed(self) -> None:
        presence = self.presence()
        changed = presence != self.sent or (self.absence is not None and self.absence.moved_on(presence))
        shared = self.local() != self.shared
        if self._flush is None and (changed or shared):
            self._flush = asyncio.get_running_loop().call_later(self._delay, self._flush_presence)

    def _flush_presence(self) -> None:
        self._flush = None
        if self.closed:
            return
        local = self.local()
        if local != self.shared:
            self.shared = local
            self._share(self.page_id, local)
        presence = self.presence()
        moved = presence != self.sent
        absence = self.absence
        if moved and absence is not None:
            absence.saw_presence(self.sent, presence)
        if moved or (absence is not None and absence.moved_on(presence)):
            self.sent = presence
            if absence is not None:
                absence.told = absence.claim_at(presence)
            self.broadcast(self._presence_text(presence))
        if moved:
            self.changed()

    def broadcast(self, text: str) -> None:
        """Sends a serialised message to every connection here, framed once for all of them."""
        frame = text_frame(text)
        for connection in self.connections:
            connection.send(text, frame)

    def close_all(self, message: dict[str, Any], code: int, reason: str = "") -> None:
        """Sends `message` to every connection here, then closes them with `code`."""
        for connection in list(self.connections):
            connection.send_json(message)
            connection.close_soon(code, reason)

    # -- versions

    def committed(self, applied: Applied) -> None:
        """An action this process committed (told under the authority's page lock, so in version order):
        delivered at once when it is the next version and nobody holds the room."""
        text = events_message(applied.version, applied.events, applied.clock)
        if self.version is None or self.lock.locked():
            self._waiting[applied.version] = text
        else:
            self._deliver_next(applied.version, text)

    def announced(self, version: int) -> None:
        """Some process committed `version` (a NOTIFY): read from the log if the sockets have not heard it."""
        if self.version is not None and version > self.version:
            self.catch_up(version)

    def relayed(self, move: HeardMove, text: str) -> None:
        """Another process's committed move with its events message as the sockets receive it (a whole
        notice): delivered as it is when it is the next version and nobody holds the room, waiting in
        order while someone does, and after a gap read from the log with the versions missing."""
        if self.version is None or move.version <= self.version:
            return
        if self.absence is not None:
            self.absence.saw_move(move.version, move.to_act)
        if self.lock.locked():
            self._waiting[move.version] = text
        else:
            self._deliver_next(move.version, text)

    def _deliver_next(self, version: int, text: str) -> None:
        assert self.version is not None
        if version <= self.version:
            return  # heard already (read from the log by a catch-up)
        if version > self.version + 1:
            self.catch_up()  # a version of another process's is still on its way: read both
            return
        self.version = version
        self.broadcast(text)
        self.changed()

    def _deliver_waiting(self, up_to: int | None = None) -> None:
        """Delivers the commits told while the room was held, in order (up to `up_to`)."""
        if self.version is None:
            if not self.connections:
                self._waiting.clear()  # nobody joined: the next joiner reads the page as it stands
            return
        for version in sorted(self._waiting):
            if up_to is not None and version > up_to:
                return
            self._deliver_next(version, self._waiting.pop(version))

    def deliver_read(self, page: LoadedPage, batches: list[list[dict[str, Any]]]) -> None:
        """Delivers what was read from the log: the events of every action after the heard version, up to
        `page`'s version (call holding the room)."""
        heard = self.version
        if heard is None:
            return
        self.saw(page)
        clock = page.clock_view()  # the clock now, whichever version the message is of
        for offset, events in enumerate(batches[: max(0, page.state.version - heard)]):
            applied = Applied.sent(page.state, heard + 1 + offset, events)
            self._deliver_next(applied.version, events_message(applied.version, applied.events, clock))

    async def bring_up_to(self, page: LoadedPage) -> None:
        """Brings the sockets here up to `page`'s version before someone joins at it: the commits waiting
        first, then the log after what they heard, read once (call holding the room)."""
        self._deliver_waiting(up_to=page.state.version)
        heard = self.version
        if heard is None or heard >= page.state.version:
            return
        batches = await self._authority.events_since(self.page_id, heard, page.state.version)
        self.deliver_read(page, batches)

    # -- catching up with the log

    def catch_up(self, version: int | None = None) -> None:
        """Catches the sockets up with the log: up to `version` (announced by a NOTIFY), or, with None,
        to whatever the log holds (a commit may have gone unannounced here)."""
        if version is None:
            self._must_read = True
        else:
            self._announced = max(version, self._announced)
        if self._task is not None:
            self._again = True  # the running catch-up reads once more when it is done
            return
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def _read_once(self) -> None:
        async with self.held():
            heard = self.version
            if heard is None or self.closed:
                return  # its last socket left meanwhile
            announced, self._announced = self._announced, 0
            if self._must_read:
                self._must_read = False
            elif heard >= announced:
                return  # delivered meanwhile (this process's own commit, announced back to it)
            # One read brings the state in memory up to the log (advanced by the engine, not rebuilt)
            # and gives the events the sockets here missed.
            page, batches = await self._authority.caught_up(self.page_id, heard)
            self.deliver_read(page, batches)

    async def _run(self) -> None:
        try:
            tries = 0
            while not self.closed:
                self._again = False
                try:
                    await self._read_once()
                except (PageError, StoreUnavailable) as error:
                    message = str(error)
                    if isinstance(error, PageError) and error.code != "unavailable":
                        logger.info("page %s: no catch-up (%s)", self.page_id, message)
                        return
                    tries += 1
                    if tries >= CATCH_UP_TRIES:
                        logger.warning("page %s: catch-up failed (%s)", self.page_id, message)
                        return
                    self._again = self._must_read = True  # the failed read is owed
                    await asyncio.sleep(CATCH_UP_PAUSE_S)
                if not self._again:
                    return
        except Exception:
            logger.exception("page %s: catch-up failed", self.page_id)
        finally:
            self._task = None
            self._again = self._must_read = False
            self._announced = 0

    def stop(self) -> None:
        """Cancels the catch-up under way (at shutdown)."""
        if self._task is not None:
            self._task.cancel()
