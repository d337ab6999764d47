"""The action budget: how many actions one page and one client address may send, WebSocket and HTTP
counted together (a client cannot dodge it by reconnecting sockets or switching transport).

Every action a seat holder sends spends a token of its seat's bucket on that page and of its address's
bucket, refused ones too (a refusal costs the server the same work). The page's budget is kept per seat,
so that a player who floods his own page cannot starve his opponent's moves; actions without a seat are
refused before they cost anything (and are bounded by the HTTP and WebSocket flood limits). Caps are
per server process: several processes each keep their own buckets.
"""

from __future__ import annotations

import math

from dotfight.server.errors import ApiError
from dotfight.server.limits import RateLimiter
from dotfight.server.settings import Settings


class ActionBudget:
    """Token buckets per page's seat and per client address for actions."""

    def __init__(self, settings: Settings) -> None:
        self._pages = RateLimiter(settings.actions_per_page_per_second, settings.actions_per_page_burst)
        self._addresses = RateLimiter(
            settings.actions_per_address_per_second, settings.actions_per_address_burst
        )

    def spend(self, page_id: str, seat: str, address: str) -> None:
        """Counts one action of a seat ("blue", "red" or "both") on this page from this address; raises
        rate_limited (with Retry-After) when either is over its budget."""
        wait = max(self._addresses.wait(address), self._pages.wait(f"{page_id}/{seat}"))
        if wait > 0:
            raise ApiError(
                "rate_limited",
                "too many actions; wait a moment",
                headers={"Retry-After": str(max(1, math.ceil(wait)))},
            )
