"""The fixed, even jotting pattern: where a new base's soldiers are dotted, and free spots in a ring.

The pattern is a centre dot (when it helps) and concentric rings, chosen per soldier count to be as
compact as possible at unit spacing, then scaled to fill the base evenly. It is pure arithmetic, so it is
the same on every machine and every replay.
"""

from __future__ import annotations

import math
from functools import lru_cache

# Radial step between rings at unit spacing; points on rings this far apart can never be closer than 1.
_RING_STEP = 1.0


def _ring_radius(count: int) -> float:
    """Smallest radius at which `count` points spaced evenly on a circle are at least 1 apart."""
    if count <= 1:
        return 0.0
    return 0.5 / math.sin(math.pi / count)


def _ring_radii(rings: tuple[int, ...], centre: bool) -> list[float]:
    """Radii of a centre-plus-rings layout's rings at unit spacing (rings listed inside out): each ring
    as small as its own count allows, but at least a ring step outside the one (or the dot) inside it."""
    radii: list[float] = []
    previous: float | None = 0.0 if centre else None
    for count in rings:
        radius = _ring_radius(count)
        if previous is not None:
            radius = max(radius, previous + _RING_STEP)
        radii.append(radius)
        previous = radius
    return radii


def _compositions(total: int, max_rings: int, minimum: int) -> list[tuple[int, ...]]:
    """Non-decreasing ring counts (inside out) summing to `total`, each at least `minimum`."""
    if total == 0:
        return [()]
    if max_rings == 0:
        return []
    found: list[tuple[int, ...]] = []
    for first in range(minimum, total + 1):
        for rest in _compositions(total - first, max_rings - 1, first):
            found.append((first, *rest))
    return found


@lru_cache(maxsize=64)
def unit_pattern(count: int) -> tuple[tuple[float, float], ...]:
    """Returns `count` offsets at least 1 apart, centred on (0, 0), as compact as the ring search finds."""
    if count < 1:
        raise ValueError(f"count must be at least 1, got {count}")
    if count == 1:
        return ((0.0, 0.0),)
    best: tuple[float, int, bool, tuple[int, ...]] | None = None
    for centre in (True, False):
        rest = count - 1 if centre else count
        # Without a centre dot every ring holds at least 2: a ring of one would be the centre dot.
        for rings in _compositions(rest, 3, 2 if not centre else 1):
            radius = _ring_radii(rings, centre)[-1]
            key = (round(radius, 12), len(rings), not centre, rings)
            if best is None or key < best:
                best = key
    assert best is not None
    _, _, no_centre, rings = best
    centre = not no_centre
    points: list[tuple[float, float]] = [(0.0, 0.0)] if centre else []
    for ring_number, (ring_count, radius) in enumerate(zip(rings, _ring_radii(rings, centre), strict=True)):
        # Each ring starts straight "up the page" (towards the enemy for blue), staggered by half a step
        # from the ring inside it so the dots interleave.
        offset = -math.pi / 2 + (math.pi / ring_count if ring_number % 2 else 0.0)
        for k in range(ring_count):
            angle = offset + 2 * math.pi * k / ring_count
            points.append((radius * math.cos(angle), radius * math.sin(angle)))
    return tuple(points)


@lru_cache(maxsize=64)
def unit_outer_radius(count: int) -> float:
    """Returns the outer radius of the unit pattern for `count` soldiers."""
    return max(math.hypot(x, y) for x, y in unit_pattern(count))


def min_spacing_radius(count: int, dot_radius: float) -> float:
    """Returns the smallest base radius whose jotting keeps every dot wholly inside and none overlapping.

    >>> round(min_spacing_radius(8, 7.0), 2)  # Classic: 8 dots of radius 7 need a base of 23.13
    23.13
    """
    return unit_outer_radius(count) * 2 * dot_radius + dot_radius


def jot(x: float, y: float, r: float, count: int, dot_radius: float, flip: bool) -> list[tuple[float, float]]:
    """Returns the jotted dot centres for a base at (x, y) of radius r.

    The pattern fills the base to `r - 2·dot_radius` (a little paper inside the wall) unless that would
    crowd the dots, in which case it spreads to exactly touching-but-not-overlapping, never past
    `r - dot_radius`. `flip` turns the pattern half a turn (red faces down the page).

    >>> [(round(x, 1), round(y, 1)) for x, y in jot(500.0, 1100.0, 80.0, 3, 7.0, flip=False)]
    [(500.0, 1034.0), (557.2, 1133.0), (442.8, 1133.0)]
    >>> [(round(x, 1), round(y, 1)) for x, y in jot(500.0, 300.0, 80.0, 3, 7.0, flip=True)]
    [(500.0, 366.0), (442.8, 267.0), (557.2, 267.0)]
    """
    pattern = unit_pattern(count)
    outer = unit_outer_radius(count)
    if outer == 0.0:
        return [(x, y)]
    wanted_spacing = (r - 2 * dot_radius) / outer
    # A hair over the minimum so rounding never makes two jotted dots overlap.
    min_spacing = 2 * dot_radius * (1 + 1e-9)
    spacing = max(wanted_spacing, min_spacing)
    spacing = min(spacing, (r - dot_radius) / outer)
    sign = -1.0 if flip else 1.0
    return [(x + sign * spacing * px, y + sign * spacing * py) for px, py in pattern]
