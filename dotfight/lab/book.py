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


# The numbers RULES.md lets the lab calibrate ("Calibrated by the lab": what the book does not say), with
# the range `dotfight lab calibrate` searches by default. Every other rule number is the book's own: it
# may be searched only with `--free`, and a point found so is reported, never adopted.
CALIBRATABLE: dict[str, tuple[float, float]] = {
    "wildness": (0.03, 0.10),
    "wildness_curve": (1.5, 4.5),
    "wildness_soft": (0.0, 0.02),
    "shake_sigmas": (1.5, 3.0),  # 3 is the clip of every draw (MAX_SHAKE_SIGMAS): its ceiling
}
# The pages a preset plays per calibration trial unless the target says otherwise (the slow tests' own).
BOOK_GAMES: dict[str, int] = {"quick": 200, "dawood": 60}


def book_target() -> dict[str, object]:
    """The book's table as a calibration target (the `--target` file's format, docs/LAB.md): every figure
    of Quick and the turns of Dawood's 5 × 10, each with its value, band and weight 1.

    >>> target = book_target()
    >>> sorted(target), target["dawood"]["figures"]  # type: ignore[index]
    (['dawood', 'quick'], {'turns': {'value': 36.0, 'band': [28.8, 43.2], 'weight': 1.0}})
    """

    def figure(name: str, preset: str) -> dict[str, object]:
        value, band = book_value(name, preset), target_band(name, preset)
        assert value is not None and band is not None
        return {"value": value, "band": list(band), "weight": 1.0}

    return {
        "quick": {
            "games": BOOK_GAMES["quick"],
            "figures": {name: figure(name, "quick") for name in (*BOOK, "turns")},
        },
        "dawood": {
            "games": BOOK_GAMES["dawood"],
            "twins": False,
            "figures": {"turns": figure("turns", "dawood")},
        },
    }
