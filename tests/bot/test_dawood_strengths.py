"""The strengths are ordered: hard beats easy on most pages (a small seeded sample; the lab measures 200)."""

from __future__ import annotations

from dotfight.bot import STRENGTHS
from dotfight.lab import LabConfig, build_report, run_pages


def test_stronger_bots_try_more_candidates_and_more_luck() -> None:
    easy, normal, hard = (STRENGTHS[name] for name in ("easy", "normal", "hard"))
    assert easy.pairs < normal.pairs < hard.pairs
    assert easy.trials < normal.trials < hard.trials
    assert easy.samples < normal.samples < hard.samples


def test_hard_beats_easy_on_most_quick_pages() -> None:
    # Colours alternate so that neither bot keeps the first move.
    config = LabConfig(preset="quick", games=24, seed=11, bot_blue="hard", bot_red="easy", alternate=True)
    report = build_report(config, run_pages(config, workers=2))
    hard = report["by_strength"]["hard"]
    assert hard["pages"] == 24
    assert hard["wins"] >= 16, report["by_strength"]
