"""The action budget: how many actions one page and one client address may send, WebSocket and HTTP
counted together (a client cannot dodge it by reconnecting sockets or switching transport).

Every arriving action spends a token of its page's bucket and of its address's bucket, refused ones too
(a refusal costs the server the same work). Caps are per server process: several processes each keep
their own buckets.
"""

from __future__ import annotations

import math

from dotfight.server.errors import ApiError
from dotfight.server.limits import RateLimiter
from dotfight.server.settings import Settings


class ActionBudget:
    """Token buckets per page and per client address for actions."""

    def __init__(self, settings: Settings) -> None:
        self._pages = RateLimiter(settings.actions_per_page_per_second, settings.actions_per_page_burst)
        self._addresses = RateLimiter(
            settings.actions_per_address_per_second, settings.actions_per_address_burst
        )

    def spend(self, page_id: str, address: str) -> None:
        """Counts one action of this page from this address; raises rate_limited (with Retry-After)
        when either is over its budget."""
        wait = max(self._addresses.wait(address), self._pages.wait(page_id))
        if wait > 0:
            raise ApiError(
                "rate_limited",
                "too many actions; wait a moment",
                headers={"Retry-After": str(max(1, math.ceil(wait)))},
            )
