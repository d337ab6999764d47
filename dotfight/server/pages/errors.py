"""The page authority's refusals: domain errors with the stable codes of the API (PROTOCOL.md), which the
routes turn into the API's error shape. They carry no HTTP (a code, a message, a reason, and for a stale
version the page as it stands)."""

from __future__ import annotations

from typing import Any


class PageError(ValueError):
    """A refusal of the page authority: `code` (stable, the API's), `message`, `reason` (snake_case
    detail or None) and `extra` (fields the answer adds, e.g. the snapshot of a stale page)."""

    code = "bad_request"

    def __init__(
        self, message: str, *, reason: str | None = None, extra: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason
        self.extra = extra or {}


class BadRequest(PageError):
    """A command that cannot be carried out as given (bad rules, a move_id of the other side, no change)."""


class NotFound(PageError):
    """No page with this id."""

    code = "not_found"


class PageExpired(PageError):
    """The page was deleted by expiry (nobody played it past setup in time)."""

    code = "page_expired"


class BadToken(PageError):
    """The token holds no seat on this page."""

    code = "bad_token"


class StaleVersion(PageError):
    """The action was sent at another version than the page's; `extra` holds the page's snapshot."""

    code = "stale_version"


class EngineRefusal(PageError):
    """The engine refused the action (`code`: bad_request, not_your_turn, illegal_action or game_over)."""

    def __init__(self, code: str, message: str, *, reason: str | None = None) -> None:
        super().__init__(message, reason=reason)
        self.code = code


class Unavailable(PageError):
    """The page's engine worker failed or ran out of time; try again. (A database that cannot answer is
    the store's `StoreUnavailable`, which reaches `errors.api_error` as it is.)"""

    code = "unavailable"
