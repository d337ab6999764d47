"""The strengths form one ladder of depth and steadiness over one policy (docs/BOT.md, "Strengths"): each
step searches at least as deep and slips less, every level arranges, judges and draws up flicks alike;
and the ladder plays in order (a small seeded sample; the lab's ladder measures 200 pages a step)."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import pytest

from dotfight.bot import STRENGTHS, DawoodBot
from dotfight.bot.board import Board
from dotfight.bot.candidates import flick_candidates
from dotfight.engine import RuleSet, State, apply, new_page
from dotfight.lab import LabConfig, build_report, run_pages
from tests.bot.test_dawood_choices import setup_done

NAMES = tuple(STRENGTHS)


def test_stronger_bots_search_deeper_with_steadier_hands_and_only_easy_misjudges() -> None:
    easy, normal, hard = (STRENGTHS[name] for name in ("easy", "normal", "hard"))
    assert easy.pairs < normal.pairs <= hard.pairs
    assert easy.width < normal.width <= hard.width
    assert easy.first * 2**easy.rounds < normal.first * 2**normal.rounds < hard.first * 2**hard.rounds
    assert easy.evaluations() < normal.evaluations() < hard.evaluations()
    assert easy.noise > 0 and normal.noise == hard.noise == 0
    assert easy.wobble > normal.wobble > hard.wobble == 0


def test_each_level_up_the_ladder_searches_as_deep_or_deeper_and_has_a_steadier_hand() -> None:
    levels = list(STRENGTHS.values())
    assert [s.name for s in levels] == ["beginner", "easy", "steady", "normal", "hard"]
    for lower, upper in pairwise(levels):
        assert lower.pairs <= upper.pairs and lower.width <= upper.width
        assert lower.evaluations() <= upper.evaluations()
        assert lower.noise >= upper.noise
        assert lower.wobble > upper.wobble, (lower.name, upper.name)  # every step steadies the hand


def setup_log(strength: str, seed: int) -> list[tuple[str, dict[str, Any]]]:
    """Every setup action two bots of one strength make on a Quick page, in order."""
    bots = {"blue": DawoodBot(strength, seed=seed), "red": DawoodBot(strength, seed=seed + 1)}
    state = new_page(RuleSet.preset("quick"), seed)
    log: list[tuple[str, dict[str, Any]]] = []
    while state.phase != "play":
        side = state.actor
        assert side is not None
        action = bots[side].choose(state)
        log.append((side, action))
        state, _ = apply(state, side, action)
    return log


@pytest.mark.parametrize("seed", [3, 8])
def test_every_strength_draws_its_bases_and_arranges_its_men_alike(seed: int) -> None:
    # The arrangement is policy (men just outside, the bait): it is the seed's, not the strength's.
    logs = [setup_log(name, seed) for name in NAMES]
    assert any(action["type"] == "position" for _, action in logs[0])
    assert all(log == logs[0] for log in logs[1:])


def played(state: State, plies: int) -> State:
    """The page after `plies` actions of two normal bots: men crossed out, walls thinned."""
    bots = {"blue": DawoodBot("normal", seed=21), "red": DawoodBot("normal", seed=22)}
    for _ in range(plies):
        side = state.actor
        assert side is not None
        state, _ = apply(state, side, bots[side].choose(state))
    return state


@pytest.mark.parametrize("plies", [0, 7])
def test_every_strength_judges_a_flick_by_the_same_scoring(plies: int) -> None:
    state = played(setup_done(RuleSet.preset("quick"), seed=4), plies)
    side = state.actor
    assert side is not None
    board = Board.of(state)
    actions = [c.action(board) for c in flick_candidates(board, side, STRENGTHS["hard"])][:6]
    assert actions
    for luck in (5, 2**100 + 17):
        worths = {
            name: [DawoodBot(name, seed=9)._trial(state, side, action, luck) for action in actions]
            for name in NAMES
        }
        assert all(worths[name] == worths["hard"] for name in NAMES)
        assert len(set(worths["hard"])) > 1  # the flicks are told apart, not all judged alike


def test_easy_weighs_the_first_of_the_candidates_normal_and_hard_weigh() -> None:
    # The same tactics, ranked the same way: fewer pairs only cut the list short.
    state = played(setup_done(RuleSet.preset("quick"), seed=6), 5)
    side = state.actor
    assert side is not None
    board = Board.of(state)
    keys = {name: {c.key() for c in flick_candidates(board, side, STRENGTHS[name])} for name in NAMES}
    assert keys["beginner"] == keys["easy"] < keys["steady"] == keys["normal"] == keys["hard"]
    kinds = {c.kind for c in flick_candidates(board, side, STRENGTHS["easy"])}
    assert kinds == {"snipe", "lunge"}


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
    print(report["by_strength"])  # `-rP` shows it for a passing test
    return int(report["by_strength"][stronger]["wins"])


@pytest.mark.slow
def test_normal_beats_easy_on_most_quick_pages() -> None:
    assert _wins("normal", "easy", games=24, seed=12) >= 15


@pytest.mark.slow
def test_hard_beats_normal_on_most_quick_pages() -> None:
    assert _wins("hard", "normal", games=24, seed=13) >= 14
