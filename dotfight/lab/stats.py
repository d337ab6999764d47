"""95 % intervals for the lab's figures: Wilson for a share of pages, a page bootstrap for the rest.

A figure is `{"value", "low", "high", "method", "n"}` (plain JSON; `None` where nothing was measured).

- **Wilson** score interval for a proportion of independent pages (a win rate).
- **Bootstrap** (percentile, `RESAMPLES` resamples of the pages with replacement, seeded): for means over
  pages and for ratios of sums (the risk ratio, the lunge share, the walls/free-walls length ratio).
  Pages are the independent unit — the flicks and man-turns of one page are not — so whole pages are
  resampled; twin pages (same seed, free walls) are resampled together with their page.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

# The normal quantile of a two-sided 95 % interval.
Z95 = 1.959963984540054
RESAMPLES = 2000
DIGITS = 6

Figure = dict[str, Any]
Columns = dict[str, NDArray[np.float64]]


def _round(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else round(value, DIGITS)


def figure(value: float | None, low: float | None, high: float | None, method: str, n: int) -> Figure:
    """One figure with its interval, rounded for a stable JSON file."""
    return {"value": _round(value), "low": _round(low), "high": _round(high), "method": method, "n": n}


def wilson(successes: int, trials: int) -> Figure:
    """The share `successes / trials` with its 95 % Wilson score interval.

    >>> wilson(60, 100)["low"], wilson(60, 100)["high"]
    (0.502003, 0.690599)
    >>> wilson(0, 0)["value"] is None
    True
    """
    if trials == 0:
        return figure(None, None, None, "wilson", 0)
    p = successes / trials
    z2 = Z95 * Z95
    centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    half = Z95 * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / (1 + z2 / trials)
    return figure(p, max(0.0, centre - half), min(1.0, centre + half), "wilson", trials)


class Bootstrap:
    """Resamples whole pages: the same resamples for every figure of one report (seeded, so stable).

    >>> turns = Bootstrap(4, seed=1).mean([10, 20, 30, 40])
    >>> turns["value"], 10 <= turns["low"] < 25 < turns["high"] <= 40, turns["method"]
    (25.0, True, 'bootstrap')
    """

    def __init__(self, pages: int, seed: int, resamples: int = RESAMPLES) -> None:
        self.pages = pages
        rng = np.random.default_rng(seed % 2**64)
        self.picks = rng.integers(0, pages, size=(resamples, pages)) if pages else None

    def statistic(self, columns: Columns, stat: Callable[[Columns], Any]) -> Figure:
        """`stat` of the pages' columns, with its percentile interval over the resamples.

        `stat` takes columns of shape (pages,) and of shape (resamples, pages) alike and reduces the last
        axis; resamples where it is undefined (NaN, e.g. no outside man at all) are left out.
        """
        if self.picks is None:
            return figure(None, None, None, "bootstrap", 0)
        value = float(stat(columns))
        samples = np.asarray(stat({k: v[self.picks] for k, v in columns.items()}), dtype=np.float64)
        samples = samples[np.isfinite(samples)]
        if not math.isfinite(value) or samples.size == 0:
            return figure(None if not math.isfinite(value) else value, None, None, "bootstrap", self.pages)
        low, high = np.percentile(samples, [2.5, 97.5])
        return figure(value, float(low), float(high), "bootstrap", self.pages)

    def mean(self, values: Sequence[float] | NDArray[np.float64]) -> Figure:
        """The mean over pages."""
        return self.statistic({"x": np.asarray(values, dtype=np.float64)}, lambda c: c["x"].mean(axis=-1))

    def ratio(
        self, top: Sequence[float] | NDArray[np.float64], bottom: Sequence[float] | NDArray[np.float64]
    ) -> Figure:
        """`sum(top) / sum(bottom)` over pages (NaN when the bottom sums to zero)."""
        cols = {"top": np.asarray(top, dtype=np.float64), "bottom": np.asarray(bottom, dtype=np.float64)}
        return self.statistic(cols, lambda c: _divide(c["top"].sum(axis=-1), c["bottom"].sum(axis=-1)))


def _divide(top: Any, bottom: Any) -> Any:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.divide(top, bottom)
