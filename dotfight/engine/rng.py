"""The page's own counter-based generator: draw i is a pure function of (seed, i).

Draw i hashes the 16-byte big-endian seed followed by the 8-byte big-endian counter i with BLAKE2b
(8-byte digest), keeps the top 53 bits k, maps them to u = (k + 0.5) / 2**53 in (0, 1), and returns the
standard normal quantile of u clipped to ±3. Only the standard library is involved, so the numbers never
change with a numpy release. The generator's position is just the next counter value.
"""

from __future__ import annotations

import hashlib
from statistics import NormalDist

from .errors import quoted

SEED_BITS = 128
CLIP = 3.0

_NORMAL = NormalDist()
_SCALE = 2.0**-53


def check_seed(seed: object) -> int:
    """Returns the seed if it is an int in [0, 2**128), else raises ValueError naming it.

    >>> check_seed(7)
    7
    >>> check_seed(-1)
    Traceback (most recent call last):
    ...
    ValueError: seed must be an integer in [0, 2**128), got -1
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**SEED_BITS:
        raise ValueError(f"seed must be an integer in [0, 2**{SEED_BITS}), got {quoted(seed)}")
    return seed


def seed_to_hex(seed: int) -> str:
    """Writes a seed as the 32-character lowercase hex string used on the wire.

    >>> seed_to_hex(255)
    '000000000000000000000000000000ff'
    """
    return f"{seed:032x}"


def seed_from_hex(text: object) -> int:
    """Reads a 32-character hex seed string, refusing anything else with ValueError.

    >>> seed_from_hex(seed_to_hex(2**128 - 1)) == 2**128 - 1
    True
    >>> seed_from_hex("ff")
    Traceback (most recent call last):
    ...
    ValueError: seed must be a 32-character hex string, got 'ff'
    """
    if not isinstance(text, str) or len(text) != SEED_BITS // 4:
        raise ValueError(f"seed must be a {SEED_BITS // 4}-character hex string, got {quoted(text)}")
    try:
        return int(text, 16)
    except ValueError:
        raise ValueError(f"seed must be a hex string, got {quoted(text)}") from None


def uniform(seed: int, index: int) -> float:
    """Returns draw `index`'s uniform number in (0, 1).

    >>> round(uniform(1, 0), 6)
    0.025147
    """
    digest = hashlib.blake2b(seed.to_bytes(16, "big") + index.to_bytes(8, "big"), digest_size=8).digest()
    return ((int.from_bytes(digest, "big") >> 11) + 0.5) * _SCALE


def normal(seed: int, index: int) -> float:
    """Returns draw `index`: a standard normal clipped to ±3.

    The same `(seed, index)` always gives the same number, whatever was drawn before:

    >>> from dotfight.engine.rng import normal
    >>> round(normal(1, 0), 6), round(normal(7, 0), 6)
    (-1.957458, -0.56234)
    >>> normal(1, 0) == normal(1, 0)
    True
    >>> all(-3.0 <= normal(7, i) <= 3.0 for i in range(1000))
    True
    """
    z = _NORMAL.inv_cdf(uniform(seed, index))
    return CLIP if z > CLIP else -CLIP if z < -CLIP else z
