"""When an HTTP request reached the server: the arrival an action over HTTP is charged from (issue 19).

The app stamps every HTTP request as it comes in (`stamp`, before the body is read and any middleware
runs), so a phone's slow upload is not charged to its clock; the action route reads it back
(`arrived_at`). The time is the authority's (`PageAuthority.now`), which tests control.

>>> scope: dict[str, object] = {"type": "http"}
>>> stamp(scope, lambda: 5.0); arrived_at(scope, lambda: 9.0)
5.0
>>> arrived_at({}, lambda: 9.0)
9.0
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from typing import Any

__all__ = ["SCOPE_KEY", "arrived_at", "stamp"]

SCOPE_KEY = "dotfight.arrived_at"


def stamp(scope: MutableMapping[str, Any], now: Callable[[], float]) -> None:
    """Records in an HTTP request's ASGI scope when it arrived."""
    scope[SCOPE_KEY] = now()


def arrived_at(scope: MutableMapping[str, Any], now: Callable[[], float]) -> float:
    """Returns when the request arrived (now, for a request that was not stamped)."""
    stamped = scope.get(SCOPE_KEY)
    return float(stamped) if isinstance(stamped, int | float) else now()
