"""The rule book's own lab figures (issue 8's table) and the calibration's target bands (±20 %).

The book counts one side's move as one turn. It gives the turns a page only for Quick (3 of 8) and
Dawood's own 5 of 10; the other figures hold for any size.
"""

from __future__ import annotations

# figure name (dotfight.lab.report.FIGURES) -> the book's value
BOOK: dict[str, float] = {
    "risk_ratio": 0.5,
    "walls_length_ratio": 1.33,
    "longest_turn": 6.5,
    "lunge_share": 0.7,
}
BOOK_TURNS: dict[str, float] = {"quick": 22.0, "dawood": 36.0}
# The calibration's bands (issue 8), the book's value ±20 % as the issue writes them (the walls'
# lower end is 0.8 × 4/3: the book's "about 1.33" is a third longer).
BANDS: dict[str, tuple[float, float]] = {
    "risk_ratio": (0.40, 0.60),
    "walls_length_ratio": (1.07, 1.60),
    "longest_turn": (5.2, 7.8),
    "lunge_share": (0.56, 0.84),
}
BANDS_TURNS: dict[str, tuple[float, float]] = {"quick": (17.6, 26.4), "dawood": (28.8, 43.2)}


def book_value(name: str, preset: str) -> float | None:
    """The book's value of a figure on a preset, or None when the book gives none.

    >>> book_value("turns", "quick"), book_value("turns", "classic"), book_value("lunge_share", "classic")
    (22.0, None, 0.7)
    """
    if name == "turns":
        return BOOK_TURNS.get(preset)
    return BOOK.get(name)


def target_band(name: str, preset: str) -> tuple[float, float] | None:
    """The calibration's band for a figure: the book's value ±20 %, or None.

    >>> target_band("walls_length_ratio", "quick"), target_band("turns", "dawood")
    ((1.07, 1.6), (28.8, 43.2))
    """
    if name == "turns":
        return BANDS_TURNS.get(preset)
    return BANDS.get(name)
