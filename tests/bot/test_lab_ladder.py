"""The ladder (docs/LAB.md, "The ladder"): a round robin fitted to one Bradley–Terry scale with a weak
prior and the novice model at 0 — the fit recovers planted ratings and its intervals shrink with pages;
a small seeded round robin of real pages comes out in its known order; `dotfight lab ladder` writes the
table, the JSON and the plot, and refuses what it cannot play."""

from __future__ import annotations

import json
import math
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest

from dotfight.lab.cli import adjacent_pairs, ladder_players
from dotfight.lab.cli import run as lab_run
from dotfight.lab.ladder import ELO, Ladder, Score, build_ladder_report, expected_score, fit, run_ladder
from dotfight.lab.ladder_table import ladder_markdown
from dotfight.lab.stats import wilson

PLANTED = {"novice": 0.0, "a": 180.0, "b": 420.0, "c": 650.0, "random": -350.0}


def simulated(games: int, seed: int) -> list[Score]:
    """Every pair of the planted players, `games` pages each, won by the planted odds."""
    rng = np.random.default_rng(seed)
    names = list(PLANTED)
    scores = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            wins = int(rng.binomial(games, expected_score(PLANTED[a] - PLANTED[b])))
            scores.append(Score(a, b, wins, games - wins))
    return scores


def test_the_fit_recovers_planted_ratings_within_its_intervals() -> None:
    result = fit(simulated(400, seed=1), list(PLANTED))
    assert result.rating("novice") == 0.0 and result.interval("novice") == (0.0, 0.0)
    order = sorted(PLANTED, key=result.rating)
    assert order == sorted(PLANTED, key=PLANTED.__getitem__)
    for name, planted in PLANTED.items():
        low, high = result.interval(name)
        assert low <= planted <= high, (name, result.rating(name), (low, high))


def test_intervals_shrink_with_pages() -> None:
    names = list(PLANTED)
    widths = {}
    for games in (50, 200, 800):
        result = fit(simulated(games, seed=2), names)
        widths[games] = [result.interval(n)[1] - result.interval(n)[0] for n in names if n != "novice"]
    for name_index in range(len(names) - 1):
        few, more, most = (widths[g][name_index] for g in (50, 200, 800))
        assert few > more > most
        # About 1 / sqrt(pages): four times the pages halves the width (within the prior's pull).
        assert 0.35 < more / few < 0.7 and 0.35 < most / more < 0.7


def test_a_player_who_never_wins_still_gets_a_finite_rating_below_the_rest() -> None:
    scores = [Score("novice", "random", 100, 0), Score("novice", "a", 50, 50), Score("a", "random", 100, 0)]
    result = fit(scores, ["novice", "a", "random"])
    low, high = result.interval("random")
    assert math.isfinite(result.rating("random")) and math.isfinite(low)
    assert result.rating("random") < -600 < high < result.rating("a")
    # One virtual draw a pair: 100 wins and half a page against half a page.
    odds = (100 + 0.5) / 0.5
    assert abs(result.rating("random")) > ELO * math.log(odds) * 0.9


def test_a_step_interval_uses_the_covariance_of_the_two_ratings() -> None:
    result = fit(simulated(200, seed=3), list(PLANTED))
    diff, low, high = result.step("a", "b")
    assert diff == pytest.approx(result.rating("b") - result.rating("a"))
    side_by_side = (result.interval("b")[1] - result.interval("b")[0]) + (
        result.interval("a")[1] - result.interval("a")[0]
    )
    assert 0 < high - low < side_by_side


def test_each_pair_is_reported_with_its_wilson_interval_beside_the_fitted_share() -> None:
    ladder = Ladder(players=("novice", "easy"), games=200)
    report = build_ladder_report(ladder, [Score("novice", "easy", 52, 147, 1)], ("novice", "easy"))
    (pair,) = report["pairs"]
    assert pair["score_a"]["value"] == pytest.approx(52.5 / 200)
    assert (pair["score_a"]["low"], pair["score_a"]["high"]) == (
        wilson(52, 200)["low"],
        wilson(52, 200)["high"],
    )
    assert pair["fitted_a"] == pytest.approx(expected_score(-report["ratings"][0]["rating"]), abs=1e-3)


def test_a_ladder_without_the_novice_is_anchored_on_its_first_player() -> None:
    result = fit([Score("easy", "hard", 10, 30)], ["easy", "hard"])
    assert result.anchor == "easy" and result.rating("easy") == 0.0 and result.rating("hard") > 0


def test_a_player_who_meets_nobody_is_refused() -> None:
    with pytest.raises(ValueError, match="cannot rate hard"):
        fit([Score("novice", "easy", 3, 5)], ["novice", "easy", "hard"])


def test_a_small_seeded_round_robin_comes_out_in_its_known_order() -> None:
    # The random player, the novice model and normal: far enough apart for 8 pages a pair.
    ladder = Ladder(players=("random", "novice", "normal"), preset="quick", games=8, seed=5)
    scores = run_ladder(ladder, workers=2)
    report = build_ladder_report(ladder, scores, ("novice", "normal"))
    print(ladder_markdown(report))  # `-rP` shows it
    assert [row["player"] for row in report["ratings"]] == ["normal", "novice", "random"]
    assert sum(s.pages for s in scores) == 24
    assert report["steps"][0]["lower"] == "novice" and report["steps"][0]["elo"] > 0


def test_the_ladder_is_the_same_whatever_the_number_of_workers() -> None:
    ladder = Ladder(players=("random", "novice"), preset="quick", games=6, seed=9)
    assert run_ladder(ladder, workers=1) == run_ladder(ladder, workers=2)


def test_adjacent_pairs_are_the_steps_from_the_novice_up_and_random_against_the_novice() -> None:
    players = ladder_players(None)
    pairs = adjacent_pairs(players)
    levels = [name for name in players if name not in ("novice", "random")]
    assert pairs[0] == ("novice", levels[0])
    assert list(pairs[1:-1]) == list(pairwise(levels))
    assert pairs[-1] == ("random", "novice")


def _cli(tmp_path: Path, *argv: str) -> int:
    from argparse import ArgumentParser

    from dotfight.lab.cli import add_arguments

    parser = ArgumentParser(prog="dotfight lab")
    add_arguments(parser)
    return lab_run(parser.parse_args(list(argv)))


def test_the_ladder_command_writes_its_table_json_and_plot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, png = tmp_path / "ladder.json", tmp_path / "ladder.png"
    status = _cli(
        tmp_path,
        *("ladder", "--preset", "quick", "--players", "random,novice", "--games", "4", "--seed", "3"),
        *("--workers", "1", "--json", str(out), "--plot", str(png)),
    )
    assert status == 0
    report = json.loads(out.read_text())
    assert report["anchor"] == "novice"
    assert {row["player"] for row in report["ratings"]} == {"random", "novice"}
    assert report["pairs"][0]["wins_a"] + report["pairs"][0]["wins_b"] + report["pairs"][0]["draws"] == 4
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    printed = capsys.readouterr()
    assert "ratings (novice fixed at 0)" in printed.out
    assert "pages/s" in printed.err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("ladder", "--players", "novice,grandmaster"), "unknown player 'grandmaster'"),
        (("ladder", "--players", "novice"), "at least two players"),
        (("ladder", "--players", "novice,novice"), "each player once"),
        (("ladder", "--param", "wildness=0.1"), "belong to `dotfight lab sweep`"),
        (("--players", "novice,easy"), "belong to `dotfight lab ladder`"),
    ],
)
def test_the_ladder_command_refuses_what_it_cannot_play(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], message: str
) -> None:
    out = tmp_path / "ladder.json"
    assert _cli(tmp_path, *argv, "--games", "1", "--quiet", "--json", str(out)) == 2
    err = capsys.readouterr().err
    assert "lab: bad_request:" in err and message in err.replace("\n", " ")
    assert not out.exists()


# The ladder's own measuring run (docs/LAB.md, "The ladder"):
# `dotfight lab ladder --preset quick --games 200 --seed 2026 --adjacent`.
LADDER_RUN = {"preset": "quick", "games": 200, "seed": 2026}
EVEN_STEP = (150.0, 300.0)
FAIR_FOOT = (0.40, 0.60)


@pytest.mark.slow
def test_the_levels_stand_in_even_steps_above_a_foot_a_new_player_can_beat(
    request: pytest.FixtureRequest,
) -> None:
    from dotfight.bot import STRENGTHS
    from dotfight.lab.runner import default_workers
    from tests.bot.test_lab_calibration import asked_for_slow

    if not asked_for_slow(request.config):
        pytest.skip("slow: the ladder runs with `-m slow`")
    players = ladder_players(None)
    ladder = Ladder(players=players, only=adjacent_pairs(players), **LADDER_RUN)  # type: ignore[arg-type]
    scores = run_ladder(ladder, workers=default_workers())
    report = build_ladder_report(ladder, scores, ("novice", *STRENGTHS))
    print(ladder_markdown(report))  # the figures docs/LAB.md quotes (`-rP` shows them)
    lowest = next(iter(STRENGTHS))
    foot = next(s for s in scores if {s.a, s.b} == {"novice", lowest})
    share = (foot.points_a if foot.a == lowest else foot.pages - foot.points_a) / foot.pages
    assert FAIR_FOOT[0] <= share <= FAIR_FOOT[1], f"{lowest} scores {share:.3f} against the novice model"
    steps = {(row["lower"], row["upper"]): row["elo"] for row in report["steps"] if row["lower"] != "novice"}
    assert list(steps) == list(pairwise(STRENGTHS))
    uneven = {pair: elo for pair, elo in steps.items() if not EVEN_STEP[0] <= elo <= EVEN_STEP[1]}
    assert not uneven, f"steps outside {EVEN_STEP} Elo: {uneven}"


def test_the_examples_in_the_ladder_and_progress_docstrings_pass() -> None:
    import doctest

    from dotfight.lab import ladder, progress

    for module in (ladder, progress):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.attempted > 0 and result.failed == 0, module.__name__


def test_plain_progress_lines_are_spaced_by_the_clock_and_the_last_is_always_written() -> None:
    import io

    from dotfight.lab.progress import PlainProgress

    ticks = iter([0.0, 1.0, 2.0, 40.0, 41.0])
    out = io.StringIO()
    lines = PlainProgress("ladder", 10, out, every=30.0, clock=lambda: next(ticks))
    for _ in range(3):
        lines.advance(3)  # at 1 s and 2 s: too soon; at 40 s: a line
    assert out.getvalue() == "ladder: 9 / 10 pages, 0.2 pages/s, 0:04 left\n"
    lines.advance(1)  # complete at 41 s: written at once
    assert out.getvalue().splitlines()[-1] == "ladder: 10 / 10 pages, 0.2 pages/s, 0:00 left"
