"""The strengths are ordered: hard beats easy on most pages (a small seeded sample; the lab measures 200)."""

from __future__ import annotations

import pytest

from dotfight.bot import STRENGTHS
from dotfight.lab import LabConfig, build_report, run_pages


def test_stronger_bots_search_deeper_with_steadier_hands_and_only_easy_misjudges() -> None:
    easy, normal, hard = (STRENGTHS[name] for name in ("easy", "normal", "hard"))
    assert easy.pairs < normal.pairs <= hard.pairs
    assert easy.width < normal.width <= hard.width
    assert easy.first * 2**easy.rounds < normal.first * 2**normal.rounds < hard.first * 2**hard.rounds
    assert easy.evaluations() < normal.evaluations() < hard.evaluations()
    assert easy.noise > 0 and normal.noise == hard.noise == 0
    assert easy.wobble > normal.wobble > hard.wobble == 0


def test_hard_beats_easy_on_most_quick_pages() -> None:
    # Colours alternate so that neither bot keeps the first move.
    config = LabConfig(preset="quick", games=24, seed=11, bot_blue="hard", bot_red="easy", alternate=True)
    report = build_report(config, run_pages(config, workers=2))
    hard = report["by_strength"]["hard"]
    assert hard["pages"] == 24
    assert hard["wins"] >= 16, report["by_strength"]


def _wins(stronger: str, weaker: str, games: int, seed: int) -> int:
    config = LabConfig(
        preset="quick", games=games, seed=seed, bot_blue=stronger, bot_red=weaker, alternate=True
    )
    report = build_report(config, run_pages(config, workers=2))
    assert report["by_strength"][stronger]["pages"] == games
    return int(report["by_strength"][stronger]["wins"])


@pytest.mark.slow
def test_normal_beats_easy_on_most_quick_pages() -> None:
    assert _wins("normal", "easy", games=24, seed=12) >= 15


@pytest.mark.slow
def test_hard_beats_normal_on_most_quick_pages() -> None:
    assert _wins("hard", "normal", games=24, seed=13) >= 14
