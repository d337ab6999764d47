"""Dawood-bot's seat: when it is the bot's move, a worker process thinks and the bot moves like a person.

The bot's actions go through the page authority exactly as a person's do (checked, stored, broadcast). It is
handed the page with a different dice generator (`state.with_rng`), so it can sample luck but never
peek at the page's real draws. It thinks in a pool of worker processes (`workers/bot.py`), never in the
server's own: the event loop and the writer never wait on a bot, and a thinking bot holds no lock
another page needs. Each decision has a time budget, after which the bot plays the best move it found.

A database that does not answer is waited out, never played around: the bot tries the same move again
(same `move_id`, so it can never land twice) with a growing pause, for as long as the server runs; a
page left behind by a restart is picked up by the resume-on-start path. Only a refusal by the rules (a
bot bug) makes it fall back to `stop`, then `resign`, so a person is never left waiting.

Several server processes may share a database: each bot page is played by one process at a time, the
holder of its lease (`dotfight/store/leases.py`), taken when the bot is woken and given up when it is the
person's move again. The holder renews its leases every third of their length (a heartbeat); every
process looks every half length for pages waiting for the bot that nobody holds (a restart, a dead or
hung holder, a wake-up that found the lease taken) and plays them. So no bot move is worked out twice,
and none is left unplayed for longer than about one lease after its process died.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid
from datetime import timedelta
from typing import Any

from dotfight.server.page_view import LoadedPage
from dotfight.server.pages.authority import Applied, PageAuthority, Seat
from dotfight.server.pages.errors import PageError
from dotfight.server.workers.bot import BotPool
from dotfight.store.leases import DEFAULT_LEASE_S
from dotfight.store.records import StoreUnavailable
from dotfight.store.sql_pages import SqlPageStore

logger = logging.getLogger(__name__)

# A safety net: moves the bot makes in a row before it must be woken again.
MAX_MOVES_PER_WAKE = 500
# What the bot does when its own choice is refused or it fails: end the turn, else give up the page,
# so that a person is never left waiting for a bot that cannot move.
FALLBACK_ACTIONS: tuple[dict[str, Any], ...] = ({"type": "stop"}, {"type": "resign"})
# The first pause before trying again while the database is unavailable (it doubles each time, up to
# the `BOT_RETRY_MAX_S` setting).
FIRST_RETRY_S = 0.1


class _Backoff:
    """Growing pauses between tries while the database is unavailable."""

    def __init__(self, longest_s: float) -> None:
        self._longest_s = longest_s
        self._next_s = FIRST_RETRY_S

    async def pause(self, page_id: str) -> None:
        logger.info(
            "page %s: the database is unavailable; the bot tries again in %.1f s", page_id, self._next_s
        )
        await asyncio.sleep(self._next_s)
        self._next_s = min(self._longest_s, self._next_s * 2)


class BotRunner:
    """Plays the bot seat of every bot page whenever it is the bot's move."""

    def __init__(
        self,
        authority: PageAuthority,
        store: SqlPageStore,
        pool: BotPool | None,
        retry_max_s: float = 10.0,
        lease_s: float = DEFAULT_LEASE_S,
    ) -> None:
        self._authority = authority
        # The leases are the store's to write (dotfight/store/leases.py, on the store's writer), and the
        # pages waiting for the bot one of its views.
        self._store = store
        self._pool = pool
        self._retry_max_s = retry_max_s
        self._lease = timedelta(seconds=lease_s)
        # This process, as the owner of its leases: unique among processes and restarts.
        self.owner = f"{socket.gethostname()[:24]}-{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._woken: set[str] = set()
        # The pages whose lease this process holds (renewed by the heartbeat).
        self._held: set[str] = set()
        self._resumer: asyncio.Task[None] | None = None
        authority.add_listener(self._after_action)

    @property
    def available(self) -> bool:
        """Tells whether Dawood-bot can play here."""
        return self._pool is not None

    def _after_action(self, page: LoadedPage, _applied: Applied) -> None:
        self.wake(page)

    def wake(self, page: LoadedPage) -> None:
        """Starts the bot on a page if it is the bot's move there (harmless if it already runs)."""
        bot = page.bot
        if bot is None or self._pool is None or page.state.actor != bot.side:
            return
        # The flag is read again by a running task before it stops, so no wake-up is ever lost.
        self._woken.add(page.meta.id)
        if page.meta.id not in self._tasks:
            self._tasks[page.meta.id] = asyncio.create_task(self._run(page.meta.id))

    def resume_waiting_pages(self) -> None:
        """Starts, in the background, the bot of every open bot page left at the bot's move (e.g. by a
        restart) that no process plays, so that nobody has to look at a page to get the bot's answer;
        from then on, renews this process's leases and looks for such pages again, every few seconds."""
        if self._pool is not None and self._resumer is None:
            self._resumer = asyncio.create_task(self._keep_leases())

    async def _keep_leases(self) -> None:
        beat_s = self._lease.total_seconds() / 3
        beats = 0
        while True:
            if beats % 2 == 0:  # every second heartbeat (two thirds of a lease): pages nobody plays
                await self._resume()
            await asyncio.sleep(beat_s)
            beats += 1
            await self._renew()

    async def _renew(self) -> None:
        if not self._held:
            return
        held = set(self._held)
        try:
            kept = await asyncio.wrap_future(self._store.renew_leases(held, self.owner, self._lease))
        except Exception:
            logger.exception("the bot's leases could not be renewed")
            return
        for page_id in (held - kept) & self._held:  # (not one given up meanwhile)
            # Ran out (this process hung past its lease) and was taken: the new holder plays on.
            logger.warning("page %s: the bot's lease was lost to another process", page_id)
            self._held.discard(page_id)

    async def _take_lease(self, page_id: str) -> bool:
        try:
            taken = await asyncio.wrap_future(self._store.take_lease(page_id, self.owner, self._lease))
        except Exception:  # the sweep tries again once the database answers
            logger.exception("page %s: the bot's lease could not be taken", page_id)
            return False
        if taken:
            self._held.add(page_id)
        return taken

    async def _give_up_lease(self, page_id: str) -> None:
        self._held.discard(page_id)
        try:
            await asyncio.wrap_future(self._store.release_lease(page_id, self.owner))
        except Exception:  # it runs out by itself
            logger.exception("page %s: the bot's lease could not be given up", page_id)

    async def _bot_to_move(self, page_id: str) -> bool:
        """Tells whether it is the bot's move on the page, as stored (another process may have moved)."""
        try:
            page = await self._authority.page(page_id)
        except (PageError, StoreUnavailable):
            return False
        return page.bot is not None and page.state.actor == page.bot.side

    async def _resume(self) -> None:
        try:
            page_ids = await self._store.views.pages_awaiting_bot()
        except Exception:
            logger.exception("the bot pages waiting for a move could not be listed")
            return
        if page_ids:
            logger.info("resuming Dawood-bot on %d page(s)", len(page_ids))
        for page_id in page_ids:
            if page_id in self._tasks:
                continue
            try:
                self.wake(await self._authority.page(page_id))
            except Exception:  # one unreadable page must not keep the bot from the others
                logger.exception("page %s: the bot could not be resumed", page_id)

    async def _run(self, page_id: str) -> None:
        try:
            while page_id in self._woken:
                self._woken.discard(page_id)
                if not await self._take_lease(page_id):
                    return  # another process plays the bot here
                try:
                    await self._play_while_bot_to_move(page_id)
                finally:
                    await self._give_up_lease(page_id)
                # A move that woke the bot while the lease was held elsewhere (by an old task of this
                # process, or another process) found it taken: asked again once it is given up.
                if await self._bot_to_move(page_id):
                    self._woken.add(page_id)
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("page %s: the bot seat failed", page_id)
        finally:
            del self._tasks[page_id]

    async def _play_while_bot_to_move(self, page_id: str) -> None:
        assert self._pool is not None
        backoff = _Backoff(self._retry_max_s)
        moves = 0
        while moves < MAX_MOVES_PER_WAKE and page_id in self._held:
            try:
                page = await self._authority.page(page_id)
            except (PageError, StoreUnavailable) as error:
                if isinstance(error, PageError) and error.code != "unavailable":
                    raise
                await backoff.pause(page_id)
                continue
            bot = page.bot
            if bot is None or page.state.actor != bot.side:
                return
            version = page.state.version
            moves += 1
            logger.info("page %s: Dawood-bot decides at version %d", page_id, version)
            try:
                action = await self._pool.decide(bot, page)
            except Exception:
                logger.exception("page %s: the bot could not choose a move", page_id)
                await self._fall_back(page_id, bot.side, version, backoff)
                continue
            refusal = await self._act(page_id, bot.side, action, version, backoff)
            if refusal is not None and refusal.code != "stale_version":  # stale: the person moved
                logger.warning("page %s: the bot's move was refused (%s)", page_id, refusal.code)
                await self._fall_back(page_id, bot.side, version, backoff)

    async def _act(
        self, page_id: str, side: str, action: dict[str, Any], version: int, backoff: _Backoff
    ) -> PageError | None:
        """Plays one action, trying again while the database is unavailable; returns the refusal, if any.

        The `move_id` names the bot's move at this version, so a try whose answer was lost (committed
        after all) is answered from the log instead of being applied twice.
        """
        move_id = f"dawood-bot-{version}-{action.get('type')}"
        while True:
            try:
                await self._authority.act(page_id, Seat(side), action, version, move_id)
                return None
            except StoreUnavailable:
                pass  # the database is away for now: tried again
            except PageError as error:
                if error.code != "unavailable":
                    return error
            await backoff.pause(page_id)

    async def _fall_back(self, page_id: str, side: str, version: int, backoff: _Backoff) -> None:
        for action in FALLBACK_ACTIONS:
            refusal = await self._act(page_id, side, action, version, backoff)
            if refusal is None or refusal.code == "stale_version":
                return

    async def stop(self) -> None:
        """Cancels every running bot (at shutdown)."""
        tasks = list(self._tasks.values())
        if self._resumer is not None:
            tasks.append(self._resumer)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        # Given up rather than left to run out: another process takes the pages over at once.
        for page_id in list(self._held):
            await self._give_up_lease(page_id)
