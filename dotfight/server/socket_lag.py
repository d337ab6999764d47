"""Each WebSocket's one-way lag, measured from the keep-alive pings uvicorn already sends (issue 19).

No client message is added: the server's WebSocket protocol (`transport.LeanWebSocketProtocol`) hands
every pong's round trip to the `SocketLag` it put in the connection's ASGI scope, and the page socket
(`live.py`) asks it for the allowance of each action (`people.lag`: half the round trip, smoothed,
capped). A socket that has not answered a ping yet, and any action over HTTP, gets the HTTP allowance.

>>> lag = SocketLag()
>>> lag.allowance()
0.1
>>> lag.measured(0.3); lag.allowance()
0.15
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from dotfight.server.people.errors import PeopleError
from dotfight.server.people.lag import LagEstimate, allowance, observe

__all__ = ["SCOPE_KEY", "SocketLag", "allowance_of"]

# The key of a connection's SocketLag in its ASGI scope.
SCOPE_KEY = "dotfight.lag"

_log = logging.getLogger(__name__)


class SocketLag:
    """One socket's lag estimate, fed by its pongs on the event loop's thread."""

    __slots__ = ("estimate",)

    def __init__(self) -> None:
        self.estimate = LagEstimate()

    def measured(self, round_trip_s: float) -> None:
        """Takes one more ping's round trip (a nonsensical one is dropped: the estimate is only a help)."""
        try:
            self.estimate = observe(self.estimate, round_trip_s)
        except PeopleError:
            _log.debug("a round trip of %r s dropped", round_trip_s)

    def allowance(self) -> float:
        """Returns an action's allowance from this socket (seconds, capped)."""
        return allowance(self.estimate)


def allowance_of(scope: Mapping[str, Any]) -> float:
    """Returns the allowance of an action from the socket of this ASGI scope (the HTTP one without a
    measured lag, e.g. under a test client).

    >>> allowance_of({})
    0.1
    """
    lag = scope.get(SCOPE_KEY)
    return lag.allowance() if isinstance(lag, SocketLag) else allowance(None)
