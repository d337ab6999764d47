"""Dawood-bot's seat: when it is the bot's move, it thinks in a worker thread and moves like a person.

The bot's actions go through the master exactly as a person's do (checked, stored, broadcast). It is
handed the page with a different dice generator (`state.with_rng`), so it can sample luck but never
peek at the page's real draws.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, Protocol

from dotfight.engine import State
from dotfight.server.errors import ApiError
from dotfight.server.master import Applied, Master, Seat
from dotfight.server.page_view import LoadedPage

logger = logging.getLogger(__name__)

# A safety net: moves the bot makes in a row before it must be woken again.
MAX_MOVES_PER_WAKE = 500
# What the bot does when its own choice is refused or it fails: end the turn, else give up the page,
# so that a person is never left waiting for a bot that cannot move.
FALLBACK_ACTIONS: tuple[dict[str, Any], ...] = ({"type": "stop"}, {"type": "resign"})


class BotPlayer(Protocol):
    """What the server needs of Dawood-bot."""

    def choose(self, state: State) -> dict[str, Any]:
        """Returns the action the bot plays for `state.actor`."""
        ...


BotFactory = Callable[[str, int], BotPlayer]


def load_bot_factory() -> BotFactory:
    """Returns the maker of Dawood-bots (strength, seed) the server plays bot pages with.

    The runner takes the factory as a parameter (None: bot mode refused with `mode_unavailable`), so a
    server can be run without bot pages and tests can stand in their own player.
    """
    # Imported here: the bot (and its numpy look-ahead) loads only when a server starts, not on import.
    from dotfight.bot import DawoodBot

    def make(strength: str, seed: int) -> BotPlayer:
        return DawoodBot(strength=strength, seed=seed)

    return make


class BotRunner:
    """Plays the bot seat of every bot page whenever it is the bot's move."""

    def __init__(self, master: Master, factory: BotFactory | None) -> None:
        self._master = master
        self._factory = factory
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._woken: set[str] = set()
        self._resumer: asyncio.Task[None] | None = None
        master.add_listener(self._after_action)

    @property
    def available(self) -> bool:
        """Tells whether Dawood-bot can play here."""
        return self._factory is not None

    def _after_action(self, page: LoadedPage, _applied: Applied) -> None:
        self.wake(page)

    def wake(self, page: LoadedPage) -> None:
        """Starts the bot on a page if it is the bot's move there (harmless if it already runs)."""
        bot = page.meta.bot
        if bot is None or self._factory is None or page.state.actor != bot.side:
            return
        # The flag is read again by a running task before it stops, so no wake-up is ever lost.
        self._woken.add(page.meta.id)
        if page.meta.id not in self._tasks:
            self._tasks[page.meta.id] = asyncio.create_task(self._run(page.meta.id))

    def resume_waiting_pages(self) -> None:
        """Starts, in the background, the bot of every open bot page left at the bot's move (e.g. by a
        restart), so that nobody has to look at a page to get the bot's answer."""
        if self._factory is not None and self._resumer is None:
            self._resumer = asyncio.create_task(self._resume())

    async def _resume(self) -> None:
        try:
            page_ids = await self._master.pages_awaiting_bot()
        except Exception:
            logger.exception("the bot pages waiting for a move could not be listed")
            return
        if page_ids:
            logger.info("resuming Dawood-bot on %d page(s)", len(page_ids))
        for page_id in page_ids:
            try:
                self.wake(await self._master.page(page_id))
            except Exception:  # one unreadable page must not keep the bot from the others
                logger.exception("page %s: the bot could not be resumed", page_id)

    async def _run(self, page_id: str) -> None:
        try:
            while page_id in self._woken:
                self._woken.discard(page_id)
                await self._play_while_bot_to_move(page_id)
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("page %s: the bot seat failed", page_id)
        finally:
            del self._tasks[page_id]

    async def _play_while_bot_to_move(self, page_id: str) -> None:
        assert self._factory is not None
        for _ in range(MAX_MOVES_PER_WAKE):
            page = await self._master.page(page_id)
            bot = page.meta.bot
            if bot is None or page.state.actor != bot.side:
                return
            version = page.state.version
            # One seed for the whole page: the bot keeps its plans (e.g. its arrangement) from move to move.
            player = self._factory(bot.strength, bot.seed)
            hidden_dice = page.state.with_rng(bot.seed)
            try:
                action = await asyncio.to_thread(player.choose, hidden_dice)
                await self._master.act(page_id, Seat(bot.side), action, version, None)
            except ApiError as error:
                if error.code == "stale_version":
                    continue  # the person moved meanwhile (e.g. resigned): look again
                logger.warning("page %s: the bot's move was refused (%s)", page_id, error.code)
                await self._fall_back(page_id, bot.side, version)
            except Exception:
                logger.exception("page %s: the bot could not choose a move", page_id)
                await self._fall_back(page_id, bot.side, version)

    async def _fall_back(self, page_id: str, side: str, version: int) -> None:
        for action in FALLBACK_ACTIONS:
            try:
                await self._master.act(page_id, Seat(side), action, version, None)
                return
            except ApiError:
                continue

    async def stop(self) -> None:
        """Cancels every running bot (at shutdown)."""
        tasks = list(self._tasks.values())
        if self._resumer is not None:
            tasks.append(self._resumer)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
