"""Errors with stable codes, and the handlers that answer them as `{error: {code, message, reason?}}`."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from dotfight.server.pages.errors import PageError
from dotfight.store.records import StoreUnavailable

logger = logging.getLogger(__name__)

# Every code the server answers with, and its HTTP status.
STATUS_BY_CODE: dict[str, int] = {
    "bad_request": 400,
    "mode_unavailable": 400,
    "bad_token": 401,
    "not_found": 404,
    "method_not_allowed": 405,
    "request_timeout": 408,
    "not_your_turn": 409,
    "game_over": 409,
    "stale_version": 409,
    "page_expired": 410,
    "too_large": 413,
    "unsupported_media_type": 415,
    "illegal_action": 422,
    "rate_limited": 429,
    "too_many_sockets": 429,
    "header_too_large": 431,
    "internal_error": 500,
    "unavailable": 503,
}


class ApiError(Exception):
    """A refusal with a stable code; `extra` adds top-level fields to the body (e.g. `snapshot`),
    `headers` HTTP headers to the answer (e.g. `Retry-After`)."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        reason: str | None = None,
        extra: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        if code not in STATUS_BY_CODE:
            raise ValueError(f"unknown error code {code!r}")
        self.code = code
        self.message = message
        self.reason = reason
        self.extra = extra or {}
        self.headers = headers or {}

    @property
    def status(self) -> int:
        """The HTTP status of this error."""
        return STATUS_BY_CODE[self.code]

    def error_body(self) -> dict[str, Any]:
        """Returns the `{code, message, reason?}` object."""
        body: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.reason is not None:
            body["reason"] = self.reason
        return body

    def to_json(self) -> dict[str, Any]:
        """Returns the whole HTTP body."""
        return {"error": self.error_body(), **self.extra}


# What a request may be refused with on its way down: the API's own refusals, the page authority's, and
# the store's word that the database cannot answer now (from the authority or the store's views alike).
Refusal = ApiError | PageError | StoreUnavailable
REFUSALS = (ApiError, PageError, StoreUnavailable)


def api_error(error: Refusal) -> ApiError:
    """A refusal in the API's shape (a domain error keeps its code, message, reason and extra): the one
    translation to the wire, for HTTP (the handlers below) and the page socket (live.py) alike."""
    if isinstance(error, ApiError):
        return error
    if isinstance(error, StoreUnavailable):
        detail = f" ({error})" if str(error) else ""
        return ApiError("unavailable", f"the database does not answer{detail}; try again in a moment")
    return ApiError(error.code, error.message, reason=error.reason, extra=error.extra)


def error_response(error: ApiError) -> JSONResponse:
    """Answers an ApiError over HTTP."""
    return JSONResponse(error.to_json(), status_code=error.status, headers=error.headers or None)


def describe_validation_error(errors: Any) -> str:
    """Says what was wrong with a request in words, without echoing the input back."""
    parts = []
    for item in list(errors)[:3]:
        location = ".".join(str(part) for part in item.get("loc", ()) if part != "body")
        message = item.get("msg", "invalid")
        parts.append(f"{location}: {message}" if location else str(message))
    return "; ".join(parts) or "the request is not valid"


async def _api_error_handler(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    return error_response(exc)


async def _page_error_handler(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, PageError | StoreUnavailable)
    return error_response(api_error(exc))


async def _validation_error_handler(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    return error_response(ApiError("bad_request", describe_validation_error(exc.errors())))


async def _http_error_handler(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    if exc.status_code == 404:
        return error_response(ApiError("not_found", "nothing here"))
    if exc.status_code == 405:
        headers = dict(exc.headers) if exc.headers else None
        refusal = ApiError("method_not_allowed", "this path does not take this method", headers=headers)
        return error_response(refusal)
    body = {"error": {"code": "bad_request", "message": str(exc.detail)}}
    return JSONResponse(body, status_code=exc.status_code, headers=exc.headers)


async def _unexpected_error_handler(_request: Request, exc: Exception) -> JSONResponse:
    logger.error("unexpected error", exc_info=exc)
    return error_response(ApiError("internal_error", "something went wrong on the server"))


def install_error_handlers(app: FastAPI) -> None:
    """Makes every refusal of `app` answer in the `{error: {...}}` shape (unexpected errors too)."""
    app.add_exception_handler(Exception, _unexpected_error_handler)
    app.add_exception_handler(ApiError, _api_error_handler)
    app.add_exception_handler(PageError, _page_error_handler)  # the page authority's refusals
    app.add_exception_handler(StoreUnavailable, _page_error_handler)  # the database views' trouble
    app.add_exception_handler(RequestValidationError, _validation_error_handler)
    app.add_exception_handler(StarletteHTTPException, _http_error_handler)
