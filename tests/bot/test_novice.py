"""The lab's reference players (docs/LAB.md, "The ladder"): the novice model keeps the jotted arrangement,
never sends, aims straight at a nearby enemy with a person's error and never lunges through a base; the
random player plays only legal actions. Both are deterministic given their seed."""

from __future__ import annotations

import math
import statistics
from typing import Any

import pytest

from dotfight.bot.rules import reach
from dotfight.engine import RuleSet, State, apply, new_page
from dotfight.lab.config import LabConfig, make_bot
from dotfight.lab.players import AIM_ERROR, NEARBY, NoviceBot, RandomBot, _crosses_wall

Decision = tuple[State, str, dict[str, Any]]


def decisions(blue: Any, red: Any, seed: int, preset: str = "quick", most: int = 600) -> list[Decision]:
    """Every (state, side, action) of one page between two players, to its end or `most` actions."""
    state = new_page(RuleSet.preset(preset), seed)
    players = {"blue": blue, "red": red}
    made: list[Decision] = []
    while state.actor is not None and len(made) < most:
        side = state.actor
        action = players[side].choose(state)
        made.append((state, side, action))
        state, _ = apply(state, side, action)  # refuses (raises) an illegal action
    return made


def novice_play(seed: int, **errors: float) -> list[Decision]:
    """The novice's own decisions in play on a page against the random player."""
    made = decisions(NoviceBot(seed, **errors), RandomBot(seed + 1), seed)
    return [d for d in made if d[1] == "blue" and d[0].phase == "play"]


def test_the_novice_keeps_the_jotted_arrangement_and_never_sends() -> None:
    made = decisions(NoviceBot(3), RandomBot(4), seed=3)
    setup = [action["type"] for state, side, action in made if side == "blue" and state.phase != "play"]
    assert set(setup) == {"draw_base", "ready"}
    play = [action["type"] for state, side, action in made if side == "blue" and state.phase == "play"]
    assert play and set(play) <= {"flick", "stop"}
    assert made[-1][0].phase == "play"  # the page was played to its end


def _aimed_at(state: State, side: str, action: dict[str, Any]) -> Any:
    """The nearest enemy the flick's vector points exactly at, or None."""
    shooter = state.soldier(action["soldier"])
    angle = math.atan2(action["vector"][1], action["vector"][0])
    enemy = "red" if side == "blue" else "blue"
    aimed = [
        target
        for target in state.living(enemy)  # type: ignore[arg-type]
        if abs(math.remainder(math.atan2(target.y - shooter.y, target.x - shooter.x) - angle, math.tau))
        < 1e-9
    ]
    return min(aimed, key=lambda t: math.hypot(t.x - shooter.x, t.y - shooter.y), default=None)


def test_a_steady_novice_aims_straight_at_one_of_the_nearest_enemies() -> None:
    flicks = [d for d in novice_play(seed=5, aim_error=0.0, power_error=0.0) if d[2]["type"] == "flick"]
    assert len(flicks) > 10
    for state, side, action in flicks:
        target = _aimed_at(state, side, action)
        assert target is not None, action
        if state.turn is not None and state.turn.chain is not None:
            continue  # a chain's link: the lunger's nearest enemy through no wall
        shooter = state.soldier(action["soldier"])
        enemy = "red" if side == "blue" else "blue"
        distances = sorted(
            math.hypot(t.x - s.x, t.y - s.y)
            for s in (state.soldier(i) for i in state.flickable(side))  # type: ignore[arg-type]
            for t in state.living(enemy)  # type: ignore[arg-type]
        )
        assert math.hypot(target.x - shooter.x, target.y - shooter.y) <= distances[NEARBY - 1] + 1e-9


def test_a_steady_novice_never_lunges_through_a_base() -> None:
    lunges = 0
    for seed in (5, 6, 7):
        for state, _side, action in novice_play(seed, aim_error=0.0, power_error=0.0):
            if action["type"] != "flick" or action["kind"] != "lunge":
                continue
            lunges += 1
            shooter = state.soldier(action["soldier"])
            dx, dy = action["vector"]
            length = math.hypot(dx, dy)
            run = reach(state.rules, min(1.0, length / state.rules.pull_max))
            home = state.base_at(shooter.x, shooter.y)
            crossed = [
                base.id
                for base in state.bases
                if base is not home
                and _crosses_wall(base, shooter.x, shooter.y, dx / length, dy / length, run)
            ]
            assert not crossed, (action, crossed)
    assert lunges > 5  # he does lunge: at men in the open


def test_the_novices_hand_errs_by_about_a_persons_aim() -> None:
    turns = []
    for seed in (5, 6):
        for state, _side, action in novice_play(seed):
            if action["type"] != "flick" or (state.turn is not None and state.turn.chain is not None):
                continue
            steady = NoviceBot(seed, aim_error=0.0, power_error=0.0).choose(state)
            if steady.get("soldier") != action["soldier"] or steady.get("kind") != action["kind"]:
                continue  # another pair drawn: the two are not the same intention
            a, b = action["vector"], steady["vector"]
            turns.append(math.remainder(math.atan2(a[1], a[0]) - math.atan2(b[1], b[0]), math.tau))
    assert len(turns) > 30
    assert 0.6 * AIM_ERROR < statistics.pstdev(turns) < 1.5 * AIM_ERROR
    assert abs(statistics.fmean(turns)) < AIM_ERROR


@pytest.mark.parametrize("player", [NoviceBot, RandomBot])
def test_a_reference_player_plays_only_legal_actions_and_is_deterministic(player: Any) -> None:
    first = decisions(player(11), player(12), seed=11)
    again = decisions(player(11), player(12), seed=11)
    assert [a for _, _, a in first] == [a for _, _, a in again]
    assert first[-1][0].phase == "play" and len(first) > 20


def test_the_lab_seats_the_reference_players_with_their_own_policy_only() -> None:
    assert isinstance(make_bot("novice", 1, "full"), NoviceBot)
    assert isinstance(make_bot("random", 1, "full"), RandomBot)
    LabConfig(preset="quick", bot_blue="novice", bot_red="random")
    with pytest.raises(ValueError, match="no policy but its own"):
        LabConfig(preset="quick", bot_blue="novice", policy_blue="snipe-only")
    with pytest.raises(ValueError, match="unknown bot strength 'expert'"):
        LabConfig(preset="quick", bot_blue="expert")
