"""Fan-out: every socket of a page, on whichever process, hears every action of its page once, in order.

The hub remembers, per page, the version all of this process's sockets of that page have heard. An
action committed here is broadcast at once when it is the next version (the usual case, no database
read); a version heard from the `Broadcast` (another process's commit, or ours after a gap) makes this
process read the missing log entries ONCE, under the page's lock, and broadcast them in order. Every
change of that version happens under the page lock (actions, hellos and catch-ups all hold it), so no
socket hears a version twice or skips one.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from dotfight.server.broadcast import Broadcast, LocalBroadcast
from dotfight.server.hub import Hub, events_message
from dotfight.server.page_view import LoadedPage, events_on_the_wire
from dotfight.server.pages.authority import Applied, PageAuthority
from dotfight.server.pages.errors import PageError

logger = logging.getLogger(__name__)

# A catch-up that fails (the database busy or away) is tried again this many times, this far apart.
CATCH_UP_TRIES = 5
CATCH_UP_PAUSE_S = 0.5


class FanOut:
    """Joins the page authority (this process's commits), the broadcast (everybody's) and the hub (the
    sockets)."""

    def __init__(self, authority: PageAuthority, hub: Hub, broadcast: Broadcast) -> None:
        self._authority = authority
        self._hub = hub
        self._broadcast = broadcast
        self._running: dict[str, asyncio.Task[None]] = {}
        self._again: set[str] = set()
        # Per page, the newest version a NOTIFY announced (a catch-up reads the log only while the
        # sockets here have not heard it: this process's own commit is often announced back to it
        # before its listener delivered it), and the pages whose log must be read whatever they heard.
        self._announced: dict[str, int] = {}
        self._must_read: set[str] = set()
        self._presence_reads: set[asyncio.Task[None]] = set()
        broadcast.subscribe(self.heard)
        broadcast.on_reconnect(self.catch_up_all)
        broadcast.subscribe_presence(hub.set_remote_presence)
        hub.on_local_presence = broadcast.share_presence

    def committed(self, page: LoadedPage, applied: Applied) -> None:
        """An authority listener: an action committed by this process (called under the page's lock)."""
        page_id = page.meta.id
        heard = self._hub.version(page_id)
        if heard is not None:
            if heard == applied.version - 1:
                self._hub.deliver(page_id, applied.version, events_message(applied.version, applied.events))
            elif heard < applied.version:
                self._schedule(page_id)  # a version of another process's is still on its way: read both
        self._broadcast.publish(page_id, applied.version)

    def first_joined(self, page_id: str) -> None:
        """Called when a page gets its first socket here: a commit heard between reading the page and
        joining its sockets found no socket to tell, so the log is read once more after the join."""
        if not isinstance(self._broadcast, LocalBroadcast):  # in-process commits all hold the lock
            self._schedule(page_id)
            # Likewise for presence: a change heard before the join had no page here to update.
            task = asyncio.create_task(self._refresh_presence(page_id))
            self._presence_reads.add(task)
            task.add_done_callback(self._presence_reads.discard)

    async def _refresh_presence(self, page_id: str) -> None:
        try:
            self._hub.set_remote_presence(page_id, await self._broadcast.remote_presence(page_id))
        except Exception:
            logger.warning("page %s: could not read presence", page_id, exc_info=True)

    def heard(self, page_id: str, version: int) -> None:
        """A broadcast subscriber: some process committed `version` of a page."""
        known = self._hub.version(page_id)
        if known is not None and version > known:
            self._schedule(page_id, version)

    async def catch_up_all(self) -> None:
        """After a dropped LISTEN connection: every page served catches up, and its presence is re-read."""
        for page_id in self._hub.page_ids():
            self._schedule(page_id)
            await self._refresh_presence(page_id)

    def bring_up_to(self, page_id: str, page: LoadedPage, batches: list[list[dict[str, Any]]]) -> None:
        """Broadcasts to a page's sockets the entries after what they heard up to `page`'s version, given
        the events of every action after that version (call under the page's lock)."""
        heard = self._hub.version(page_id)
        if heard is None:
            return
        target = page.state.version
        for offset, events in enumerate(batches[: max(0, target - heard)]):
            version = heard + 1 + offset
            wire = events_on_the_wire(page.state, events, version)
            self._hub.deliver(page_id, version, events_message(version, wire))

    async def catch_up_locked(self, page_id: str, page: LoadedPage) -> None:
        """Reads the log after what the page's sockets heard, once, and broadcasts it up to `page`'s
        version (call under the page's lock)."""
        heard = self._hub.version(page_id)
        if heard is None or heard >= page.state.version:
            return
        batches = await self._authority.events_since(page_id, heard)
        self.bring_up_to(page_id, page, batches)

    async def _catch_up(self, page_id: str) -> None:
        async with self._authority.page_lock(page_id):
            heard = self._hub.version(page_id)
            if heard is None:
                return  # its last socket left meanwhile
            announced = self._announced.pop(page_id, 0)
            if page_id in self._must_read:
                self._must_read.discard(page_id)
            elif heard >= announced:
                return  # delivered meanwhile (this process's own commit, announced back to it)
            # One read brings the state in memory up to the log (advanced by the engine, not rebuilt)
            # and gives the events the sockets here missed.
            page, batches = await self._authority.caught_up(page_id, heard)
            self.bring_up_to(page_id, page, batches)

    def _schedule(self, page_id: str, version: int | None = None) -> None:
        """Catches a page's sockets up with the log: up to `version` (announced by a NOTIFY), or, with
        None, to whatever the log holds (a commit may have gone unannounced here)."""
        if version is None:
            self._must_read.add(page_id)
        else:
            self._announced[page_id] = max(version, self._announced.get(page_id, 0))
        if page_id in self._running:
            self._again.add(page_id)  # the running catch-up reads once more when it is done
            return
        self._running[page_id] = asyncio.create_task(self._run(page_id))

    async def _run(self, page_id: str) -> None:
        try:
            tries = 0
            while True:
                self._again.discard(page_id)
                try:
                    await self._catch_up(page_id)
                except PageError as error:
                    if error.code != "unavailable":
                        logger.info("page %s: no catch-up (%s)", page_id, error.message)
                        return
                    tries += 1
                    if tries >= CATCH_UP_TRIES:
                        logger.warning("page %s: catch-up failed (%s)", page_id, error.message)
                        return
                    self._again.add(page_id)
                    self._must_read.add(page_id)  # the failed read is owed
                    await asyncio.sleep(CATCH_UP_PAUSE_S)
                if page_id not in self._again:
                    return
        except Exception:
            logger.exception("page %s: catch-up failed", page_id)
        finally:
            self._running.pop(page_id, None)
            self._again.discard(page_id)
            self._must_read.discard(page_id)
            self._announced.pop(page_id, None)

    async def close(self) -> None:
        """Cancels the catch-ups under way."""
        for task in list(self._running.values()):
            task.cancel()
