"""Seat tokens and page ids: 128-bit random secrets, stored only as sha256, compared in constant time."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Iterable


def new_token() -> str:
    """Returns a fresh seat token (128 random bits, URL-safe)."""
    return secrets.token_urlsafe(16)


def new_page_id() -> str:
    """Returns a fresh page id (72 random bits: a watch link is only as private as its id)."""
    return secrets.token_urlsafe(9)


def token_hash(token: str) -> str:
    """Returns the sha256 hex digest under which a token is stored."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def matching_hash(token: str, stored_hashes: Iterable[str]) -> str | None:
    """Returns the stored hash equal to the token's, comparing each in constant time, or None."""
    candidate = token_hash(token)
    found = None
    for stored in stored_hashes:
        if hmac.compare_digest(candidate, stored):
            found = stored
    return found
