"""The long-lived parts of a running server, built at start-up and shared by every request."""

from __future__ import annotations

from dataclasses import dataclass

from dotfight.server.bot_runner import BotRunner
from dotfight.server.broadcast import Broadcast
from dotfight.server.budgets import ActionBudget
from dotfight.server.errors import api_error
from dotfight.server.fanout import FanOut
from dotfight.server.hub import Hub
from dotfight.server.limits import RateLimiter
from dotfight.server.page_view import LoadedPage
from dotfight.server.pages.authority import PageAuthority
from dotfight.server.pages.errors import PageError
from dotfight.server.settings import Settings
from dotfight.store.sql_pages import SqlPageStore


@dataclass
class Services:
    """Settings, the page authority and the database's store under it (its views), the WebSocket hub,
    the bot seat, the HTTP rate limiter and the limiter of page creation (per client address), the
    action budget (WebSocket and HTTP actions together), and the fan-out of actions and presence across
    the processes serving the database."""

    settings: Settings
    authority: PageAuthority
    store: SqlPageStore
    hub: Hub
    bots: BotRunner
    http_limiter: RateLimiter
    creation_limiter: RateLimiter
    actions: ActionBudget
    broadcast: Broadcast
    fanout: FanOut

    @property
    def master(self) -> PageReader:
        """The page read as `routes/page_html.py` still asks for it (that route is being changed
        elsewhere at the moment); to go once that lands, the route then asks the authority directly."""
        return PageReader(self.authority)


class PageReader:
    """A page read with its refusal in the API's terms, for the one route not yet moved to the authority
    (`routes/page_html.py`, which catches `ApiError`)."""

    def __init__(self, authority: PageAuthority) -> None:
        self._authority = authority

    async def page(self, page_id: str) -> LoadedPage:
        """Returns the page at its latest version; raises the API's not_found, page_expired, unavailable."""
        try:
            return await self._authority.page(page_id)
        except PageError as error:
            raise api_error(error) from error
