"""Dawood-bot's worker processes: each decision gets the page by value (with the bot's own dice, never
the page's) and a time budget (`bot_process.py` runs in them). A server started with
`DOTFIGHT_BOT_PROCESSES=0` has none: it refuses bot pages with `mode_unavailable`."""

from __future__ import annotations

from typing import Any

from dotfight.server import bot_process
from dotfight.server.page_view import BotSeat, LoadedPage
from dotfight.server.settings import Settings
from dotfight.server.workers.pool import WorkerPool


class BotPool:
    """Dawood-bot's worker processes: each decision gets the page by value and a time budget."""

    def __init__(self, processes: int, budget_s: float, timeout_s: float) -> None:
        self._budget_s = budget_s
        self._workers = WorkerPool("Dawood-bot", processes, timeout_s, ["dotfight.server.bot_process"])

    def warm_up(self) -> None:
        """Starts the worker processes now rather than at the first decision."""
        self._workers.warm_up()

    async def decide(self, bot: BotSeat, page: LoadedPage) -> dict[str, Any]:
        """Returns the action the bot plays on this page (raises WorkerTimeout, or the bot's own error)."""
        hidden_dice = page.state.with_rng(bot.seed).to_json()
        return await self._workers.run(
            bot_process.decide, bot.strength, bot.seed, hidden_dice, self._budget_s
        )

    def close(self) -> None:
        """Stops the worker processes (at shutdown)."""
        self._workers.close()


def load_bot_pool(settings: Settings) -> BotPool | None:
    """Returns the worker processes the server plays bot pages with, or None when the settings give the
    bot no process (`bot_processes` 0): the runner then plays no bot page and creating one is refused
    with `mode_unavailable`."""
    if settings.bot_processes == 0:
        return None
    return BotPool(settings.bot_processes, settings.bot_budget_s, settings.bot_timeout_s)
