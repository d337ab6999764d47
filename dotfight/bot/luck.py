"""Seeds for the bot's own luck: derived by hashing, so every choice is a pure function of its inputs.

The bot never touches the page's generator. Its private choices and the luck it samples to weigh a flick
come from seeds hashed from (its seed, the side, the page's version, a purpose), so the same bot on the
same page always chooses the same action, whatever happened before in the process.
"""

from __future__ import annotations

import hashlib
import random

SEED_LIMIT = 2**128


def derive_seed(*parts: object) -> int:
    """A 128-bit seed that depends only on the given parts (ints and strings)."""
    text = "\x1f".join(repr(part) for part in parts).encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=16).digest(), "big")


def private_random(*parts: object) -> random.Random:
    """A `random.Random` seeded from the given parts only."""
    return random.Random(derive_seed(*parts))
