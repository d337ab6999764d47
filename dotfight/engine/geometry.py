"""Page geometry: rays against circles and the page edge, analytic and exact to floating point.

A line of ink is a ray `P + t·u` with unit `u`, `t` the distance along it. Against a circle of centre C
and radius r, with `b = u·(P − C)` and `c = |P − C|² − r²`, the ray meets the circle where
`t² + 2bt + c = 0`; the roots are taken in the cancellation-free form so that a crossing point is exact
to about 1e-9 page units. The hot paths (snipe, lunge) run these formulas over numpy arrays of every
circle at once and finish the few hits in plain Python.

Bases are circles today. `BaseShape` is the small protocol a later shaped base would implement; the
circle is its only implementation, and everything outside the hot path talks to bases through it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

# Roots closer than this to the ray's start are the point the ray starts on (a wall just crossed), not a
# new crossing. Far below anything a player can see, far above floating-point noise on a 1000-unit page.
START_EPS = 1e-7


# The coarse numpy test only narrows the search; this slack (in squared page units) keeps rounding from
# dropping a circle the exact test would count, such as a line passing exactly `dot_radius` from a centre.
NEAR_SLACK = 1e-3


def circles_near_line(
    centres: npt.NDArray[np.float64],
    near2: npt.NDArray[np.float64],
    px: float,
    py: float,
    ux: float,
    uy: float,
) -> list[int]:
    """Returns the indexes of the circles the whole line through P along u comes (about) within reach of:
    those whose centre lies no farther than the radius from the line, `|u × (C − P)|² ≤ r²` (`centres`
    holds each circle's centre as a row (x, y, 1), `near2` its r² + `NEAR_SLACK`). Callers solve these
    few exactly with `quadratic_roots`.

    Three unit circles at (0, 5), (10, 0) and (0, −5); the x axis passes only through the second:

    >>> centres = np.array([[0.0, 5.0, 1.0], [10.0, 0.0, 1.0], [0.0, -5.0, 1.0]])
    >>> circles_near_line(centres, np.ones(3) + NEAR_SLACK, 0.0, 0.0, 1.0, 0.0)
    [1]
    """
    # Few numpy steps, in place where possible: on ~70 circles each step costs far more than its
    # arithmetic. One dot product gives u × (C − P) for every circle, the rows' third column (1) carrying
    # the line's own offset u × P. The slack is on the squared radius already: the coarse test only has
    # to keep every circle the exact one counts, and one it adds or drops at the slack's edge misses the
    # line by ~1e-3 (the exact test finds no root for it anyway), whatever the rounding of the sum.
    offside = centres.dot((-uy, ux, px * uy - py * ux))
    offside *= offside
    result: list[int] = (offside <= near2).nonzero()[0].tolist()
    return result


def quadratic_roots(b: float, c: float) -> tuple[float, float] | None:
    """Returns the roots (near, far) of t² + 2bt + c = 0, or None when the ray misses the circle.

    >>> from dotfight.engine.geometry import quadratic_roots
    >>> quadratic_roots(-5.0, 9.0)  # t² − 10t + 9 = (t − 1)(t − 9)
    (1.0, 9.0)
    >>> quadratic_roots(0.0, 1.0) is None  # t² + 1 has no real root
    True
    """
    disc = b * b - c
    if disc < 0:
        return None
    s = math.sqrt(disc)
    q = -b - s if b > 0 else -b + s
    if q == 0.0:
        return 0.0, 0.0
    other = c / q
    return (q, other) if q < other else (other, q)


def edge_distance(px: float, py: float, ux: float, uy: float, width: float, height: float) -> float:
    """Returns how far the ray runs before it leaves the page rectangle [0, width] × [0, height].

    >>> from dotfight.engine.geometry import edge_distance
    >>> edge_distance(500.0, 700.0, 0.0, -1.0, 1000.0, 1400.0)  # straight up from the centre
    700.0
    >>> round(edge_distance(500.0, 700.0, 0.6, 0.8, 1000.0, 1400.0), 3)  # the right edge comes first
    833.333
    """
    tx = (width - px) / ux if ux > 0 else (-px / ux if ux < 0 else math.inf)
    ty = (height - py) / uy if uy > 0 else (-py / uy if uy < 0 else math.inf)
    return max(0.0, min(tx, ty))


class BaseShape(Protocol):
    """What the rules need of a base's outline."""

    def contains(self, x: float, y: float) -> bool:
        """Tells whether a point is inside (on the wall counts as inside)."""
        ...

    def crossings(self, px: float, py: float, ux: float, uy: float) -> list[float]:
        """Returns the distances > START_EPS at which the ray crosses the wall, nearest first."""
        ...

    def within_rect(self, x0: float, y0: float, x1: float, y1: float) -> bool:
        """Tells whether the whole shape lies inside the rectangle."""
        ...

    def gap_to(self, other: Circle) -> float:
        """Returns the clear paper between this wall and another (negative when they overlap)."""
        ...


@dataclass(frozen=True)
class Circle:
    """A round base outline: centre (x, y), radius r.

    >>> from dotfight.engine.geometry import Circle
    >>> wall = Circle(0.0, 0.0, 1.0)
    >>> wall.contains(1.0, 0.0), wall.contains(1.0, 0.5)
    (True, False)
    """

    x: float
    y: float
    r: float

    def contains(self, x: float, y: float) -> bool:
        """Tells whether a point is inside (on the wall counts as inside)."""
        dx, dy = x - self.x, y - self.y
        return dx * dx + dy * dy <= self.r * self.r

    def crossings(self, px: float, py: float, ux: float, uy: float) -> list[float]:
        """Returns the distances > START_EPS at which the ray crosses the wall, nearest first.

        >>> wall = Circle(0.0, 0.0, 1.0)
        >>> wall.crossings(-5.0, 0.0, 1.0, 0.0)  # in and out again
        [4.0, 6.0]
        >>> wall.crossings(0.0, 0.0, 1.0, 0.0)  # from the centre: only the way out
        [1.0]
        >>> wall.crossings(-5.0, 1.0, 1.0, 0.0)  # a tangent touches without crossing
        []
        """
        dx, dy = px - self.x, py - self.y
        roots = quadratic_roots(ux * dx + uy * dy, dx * dx + dy * dy - self.r * self.r)
        if roots is None or roots[0] == roots[1]:
            return []  # a tangent touches the wall without crossing it
        return [t for t in roots if t > START_EPS]

    def within_rect(self, x0: float, y0: float, x1: float, y1: float) -> bool:
        """Tells whether the whole circle lies inside the rectangle."""
        return (
            x0 <= self.x - self.r
            and self.x + self.r <= x1
            and y0 <= self.y - self.r
            and self.y + self.r <= y1
        )

    def gap_to(self, other: Circle) -> float:
        """Returns the clear paper between the two walls (negative when they overlap or nest).

        >>> Circle(0.0, 0.0, 1.0).gap_to(Circle(5.0, 0.0, 2.0))
        2.0
        """
        return math.hypot(self.x - other.x, self.y - other.y) - self.r - other.r
