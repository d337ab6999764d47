"""The long-lived parts of a running server, built at start-up and shared by every request."""

from __future__ import annotations

from dataclasses import dataclass

from dotfight.server.bot_runner import BotRunner
from dotfight.server.broadcast import Broadcast
from dotfight.server.budgets import ActionBudget
from dotfight.server.limits import RateLimiter
from dotfight.server.offers import Offers
from dotfight.server.pages.authority import PageAuthority
from dotfight.server.rooms import Rooms
from dotfight.server.settings import Settings
from dotfight.store.sql_pages import SqlPageStore


@dataclass
class Services:
    """Settings, the page authority and the database's store under it (its views), the pages' rooms
    (their sockets, fed by the authority and the broadcast), the bot seat, the HTTP rate limiter and the
    limiter of page creation (per client address), the action budget (WebSocket and HTTP actions
    together), the broadcast of commits and presence across the processes serving the database, and the
    rematch offers and phrases of pages between two people."""

    settings: Settings
    authority: PageAuthority
    store: SqlPageStore
    rooms: Rooms
    bots: BotRunner
    http_limiter: RateLimiter
    creation_limiter: RateLimiter
    actions: ActionBudget
    broadcast: Broadcast
    offers: Offers
