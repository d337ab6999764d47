"""Fair dice: a page's seed is drawn in secret, committed to by its sha256, revealed when the page is over."""

from __future__ import annotations

import hashlib
import secrets

SEED_BITS = 128


def new_seed() -> int:
    """Draws a fresh 128-bit seed."""
    return secrets.randbits(SEED_BITS)


def seed_hex(seed: int) -> str:
    """Writes a seed as the 32 lowercase hex characters used on the wire."""
    return f"{seed:032x}"


def seed_commitment(seed: int) -> str:
    """Returns the sha256 (hex) of the seed's 32-character hex form, shown from the start of the page."""
    return hashlib.sha256(seed_hex(seed).encode("ascii")).hexdigest()
