"""engine/query.py: its answers agree with `apply` exactly, over random pages and random actions, legal
and not, and asking never plays or draws dice."""

from __future__ import annotations

import dataclasses
import json
import random
from contextlib import ExitStack
from typing import Any
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dotfight.engine import (
    Chain,
    EngineError,
    Replay,
    RuleSet,
    State,
    apply,
    can_stand,
    flickable,
    placement_problem,
    refusal,
    send_options,
    turn_options,
)
from dotfight.engine.state import evolve
from tests.engine import reference_query
from tests.engine.conftest import Page
from tests.engine.strategies import legal_action, play_page, player_randoms, seeds, varied_rule_sets
from tests.engine.test_golden import GOLDEN_FILES
from tests.engine.test_properties import PAGE_SETTINGS

ACTION_TYPES = ("draw_base", "quick_setup", "position", "ready", "flick", "send", "stop", "resign")


def no_dice() -> ExitStack:
    """Makes every draw from the page's generator fail loudly while it is active."""
    stack = ExitStack()
    for module in ("dotfight.engine.rng", "dotfight.engine.snipe", "dotfight.engine.lunge"):
        stack.enter_context(mock.patch(f"{module}.normal", side_effect=AssertionError("dice drawn")))
    return stack


def some_action(state: State, rng: random.Random) -> Any:
    """An action of any shape: legal ones, near misses of every rule, and junk."""
    ids = [s.id for s in state.soldiers] + ["b99s9"]
    bases = [b.id for b in state.bases] + ["b99"]
    rules = state.rules
    roll = rng.random()
    if roll < 0.3 and state.actor is not None:
        try:
            return legal_action(state, rng)
        except RuntimeError:  # no room for another base
            pass
    if roll < 0.33:
        return rng.choice([None, 3, "flick", [], {"type": "jump"}, {"type": "stop", "extra": 1}])
    if roll < 0.6 and state.phase == "play" and state.actor is not None:
        return plausible_play(state, state.actor, rng)
    kind = rng.choice(ACTION_TYPES)
    if kind == "draw_base":
        return {
            "type": kind,
            "x": rng.uniform(-50, rules.page_width + 50),
            "y": rng.uniform(-50, rules.page_height + 50),
            "r": rng.uniform(rules.base_radius_min - 10, rules.base_radius_max + 10),
        }
    if kind == "position":
        moves = []
        for soldier_id in rng.sample(ids, rng.randint(0, min(3, len(ids)))):
            near = rng.choice(state.bases) if state.bases else None
            cx, cy, r = (near.x, near.y, near.r) if near else (500.0, 700.0, 100.0)
            moves.append(
                {
                    "id": soldier_id,
                    "x": cx + rng.uniform(-r - 30, r + 30),
                    "y": cy + rng.uniform(-r - 30, r + 30),
                }
            )
        return {"type": kind, "soldiers": moves}
    if kind == "flick":
        length = rng.choice([0.0, 0.5, 1.0, rng.uniform(1, 2 * rules.pull_max)])
        return {
            "type": kind,
            "soldier": rng.choice(ids),
            "kind": rng.choice(["snipe", "lunge", "lunge", "hop"]),
            "vector": [length * rng.choice([-1, 0.6, 1]), length * rng.choice([-0.8, 0, 1])],
        }
    if kind == "send":
        return {
            "type": kind,
            "from": rng.choice(bases),
            "to": rng.choice(bases),
            "soldiers": rng.sample(ids, rng.randint(0, min(7, len(ids)))),
        }
    return {"type": kind}


def plausible_play(state: State, side: str, rng: random.Random) -> dict[str, Any]:
    """A flick or send that a player of `side` might try now, often just inside or outside a rule."""
    own = [b for b in state.bases if b.side == side]
    if rng.random() < 0.5 or not own:
        mine = [s for s in state.soldiers if s.side == side] or list(state.soldiers)
        return {
            "type": "flick",
            "soldier": rng.choice(mine).id,
            "kind": rng.choice(["snipe", "lunge"]),
            "vector": [rng.choice([0.5, 30.0, 200.0]), -100.0],
        }
    source, to = rng.choice(own), rng.choice(own)
    men = [s.id for s in state.soldiers if s.side == side and source.contains(s.x, s.y)]
    count = rng.randint(0, min(len(men), state.rules.send_max + 1)) if men else 0
    return {"type": "send", "from": source.id, "to": to.id, "soldiers": rng.sample(men, count)}


def page_states(rules: RuleSet, seed: int, rng: random.Random) -> list[State]:
    """The states of a page played at random, cut off somewhere along the way."""
    page = play_page(rules, seed, rng, max_actions=rng.randint(0, 120), finish=False, resign_chance=0.01)
    return page.states


def same_error(expected: EngineError | None, raised: EngineError) -> bool:
    return expected is not None and (type(expected), expected.to_json()) == (type(raised), raised.to_json())


@PAGE_SETTINGS
@given(varied_rule_sets(max_bases=3, max_soldiers=6), seeds(), player_randoms())
def test_refusal_is_exactly_what_apply_says_and_draws_no_dice(
    rules: RuleSet, seed: int, rng: random.Random
) -> None:
    states = page_states(rules, seed, rng)
    for state in rng.sample(states, min(8, len(states))):
        for _ in range(12):
            side = rng.choice(["blue", "red", "blue", "red", "green"])
            action = some_action(state, rng)
            before = state.to_json()
            with no_dice():
                expected = refusal(state, side, action)
            try:
                apply(state, side, action)
            except EngineError as raised:
                assert same_error(expected, raised), (action, expected, raised)
            else:
                assert expected is None, (action, expected)
            assert state.to_json() == before


def flick_of(soldier_id: str, kind: str) -> dict[str, Any]:
    return {"type": "flick", "soldier": soldier_id, "kind": kind, "vector": [0.0, -100.0]}


def check_turn_options(state: State) -> None:
    options = turn_options(state)
    if state.phase != "play":
        assert options is None
        return
    assert options is not None
    side = options["side"]
    assert side == state.actor
    with no_dice():
        may_flick = set(flickable(state, side))
        for soldier in state.soldiers:
            accepted = [
                refusal(state, side, flick_of(soldier.id, kind)) is None for kind in ("snipe", "lunge")
            ]
            assert (soldier.id in may_flick) == any(accepted)
            if soldier.id in may_flick:
                assert accepted == [kind in options["kinds"] for kind in ("snipe", "lunge")]
        assert flickable(state, "red" if side == "blue" else "blue") == []
        assert options["flickable"] == [s.id for s in state.soldiers if s.id in may_flick]
        assert options["can_stop"] == (refusal(state, side, {"type": "stop"}) is None)
        check_sends(state, side, options["send"])
    if options["can_end_turn"]:
        after, _ = apply(state, side, {"type": "stop"})
        assert (
            after.phase != "play"
            or after.turn is None
            or after.turn.side != side
            or after.turn.number != state.turn.number
        )  # type: ignore[union-attr]
    elif options["can_stop"]:
        after, _ = apply(state, side, {"type": "stop"})
        assert after.turn is not None and after.turn.number == state.turn.number  # type: ignore[union-attr]


def check_sends(state: State, side: str, send: dict[str, Any] | None) -> None:
    own = [b for b in state.bases if b.side == side]
    for base in own:
        men = [
            s.id
            for s in state.soldiers
            if s.side == side and s.alive and not s.on_road and base.contains(s.x, s.y)
        ]
        for to in own:
            routes = (send or {}).get("from", {}).get(base.id, [])
            single = [
                refusal(state, side, {"type": "send", "from": base.id, "to": to.id, "soldiers": [m]}) is None
                for m in men
            ]
            assert (to.id in routes) == any(single), (base.id, to.id)
    if send is None:
        return
    assert send["max"] >= 1 and json_like(send)
    largest = 0
    for source, routes in send["from"].items():
        men = [
            s.id
            for s in state.soldiers
            if s.side == side and s.alive and not s.on_road and state.base(source).contains(s.x, s.y)
        ]
        lunger = state.turn.chain.soldier if state.turn and state.turn.chain else None
        walkers = [m for m in men if m != lunger]
        assert send["men"][source] == walkers  # who may walk: the engine's answer, for the browser
        for count in range(1, len(walkers) + 1):
            ok = (
                refusal(
                    state,
                    side,
                    {"type": "send", "from": source, "to": routes[0], "soldiers": walkers[:count]},
                )
                is None
            )
            if count <= send["max"]:
                assert ok, (source, count)
            if ok:
                largest = max(largest, count)
    assert largest == send["max"]


def json_like(value: Any) -> bool:
    return bool(json.loads(json.dumps(value)) == value)


@PAGE_SETTINGS
@given(varied_rule_sets(max_bases=3, max_soldiers=6), seeds(), player_randoms())
def test_turn_options_agree_with_apply(rules: RuleSet, seed: int, rng: random.Random) -> None:
    states = page_states(rules, seed, rng)
    for state in rng.sample(states, min(6, len(states))):
        check_turn_options(state)
        options = turn_options(state)
        if options is not None:
            assert json_like(options)


@PAGE_SETTINGS
@given(varied_rule_sets(max_bases=3, max_soldiers=6), seeds(), player_randoms(), st.data())
def test_placement_problem_is_the_position_refusal(
    rules: RuleSet, seed: int, rng: random.Random, data: st.DataObject
) -> None:
    page = play_page(rules, seed, rng, max_actions=2 * rules.bases_per_side + rng.randint(0, 4), finish=False)
    state = page.final
    if state.phase != "positioning":
        return
    side = state.actor
    assert side is not None
    for _ in range(20):
        soldier = rng.choice(state.soldiers)
        base = rng.choice(state.bases)
        x = base.x + rng.uniform(-base.r - 2 * rules.outside_margin, base.r + 2 * rules.outside_margin)
        y = base.y + rng.uniform(-base.r - 2 * rules.outside_margin, base.r + 2 * rules.outside_margin)
        problem = placement_problem(state, side, soldier.id, x, y)
        error = refusal(state, side, {"type": "position", "soldiers": [{"id": soldier.id, "x": x, "y": y}]})
        if error is not None and error.reason == "out_of_range":
            continue  # malformed, not a placement question
        assert problem == (None if error is None else error.reason)
        assert can_stand(state, side, soldier.id, x, y) == (problem is None)


def test_placement_problem_names_an_unknown_soldier() -> None:
    from dotfight.engine import new_page

    page, _ = apply(new_page(RuleSet.preset("quick"), seed=7), "blue", {"type": "quick_setup"})
    assert placement_problem(page, "blue", "b99s1", 500.0, 1100.0) == "unknown_soldier"
    assert placement_problem(page, "blue", "b2s1", 500.0, 1100.0) == "not_your_soldier"


def hand_made(**turn: Any) -> State:
    page = Page()
    page.base("blue", 500.0, 1100.0)
    page.base("blue", 250.0, 1100.0)
    page.base("red", 500.0, 300.0)
    page.man("blue", 500.0, 700.0, "runner")
    return page.build(**turn)


def test_a_pending_chain_allows_only_its_lunge_and_a_stop() -> None:
    state = hand_made(chain=Chain("runner", 2, 1), flicked=True, flicks=0)
    options = turn_options(state)
    assert options is not None
    assert (options["flickable"], options["kinds"], options["chain"]) == (
        ["runner"],
        ["lunge"],
        {"soldier": "runner", "credits": 2, "link": 1},
    )
    assert (options["can_stop"], options["can_end_turn"], options["bonus"]) == (True, True, False)
    send = options["send"]
    assert (send["max"], send["from"]) == (5, {"b1": ["b2"], "b2": ["b1"]})
    # The chain's lunger is not among the men who may walk.
    assert all("runner" not in men for men in send["men"].values()) and set(send["men"]) == {"b1", "b2"}
    kept = turn_options(hand_made(chain=Chain("runner", 2, 1), flicked=True, flicks=1))
    assert kept is not None and (kept["can_stop"], kept["can_end_turn"]) == (True, False)


@pytest.mark.parametrize(
    ("turn", "bonus", "can_stop"),
    [
        ({"flicks": 1}, False, False),
        ({"flicks": 1, "flicked": True}, True, True),
        ({"flicks": 1, "flicked": True, "last_stand": True}, False, True),
        ({"flicks": 2, "flicked": True, "last_stand": True}, True, True),
    ],
)
def test_bonus_and_stop(turn: dict[str, Any], bonus: bool, can_stop: bool) -> None:
    options = turn_options(hand_made(**turn))
    assert options is not None and (options["bonus"], options["can_stop"]) == (bonus, can_stop)
    assert options["can_end_turn"] == can_stop
    assert options["steadiness"] == (0.5 if turn.get("last_stand") else 1.0)


def test_no_send_once_sent_or_out_of_turn() -> None:
    state = hand_made()
    assert send_options(state, "blue")["max"] == 5
    turn = state.turn
    assert turn is not None
    sent = evolve(state, turn=dataclasses.replace(turn, sent=True))
    assert send_options(sent, "blue") == {"max": 0, "from": {}, "men": {}} == send_options(state, "red")
    options = turn_options(sent)
    assert options is not None and options["send"] is None


# ---- the rule questions answered at once are the answers of asking every check (issue 12) ----------


def variants(state: State, rng: random.Random) -> list[State]:
    """The state and the same page with its turn changed the ways a turn can be: sent or not, a chain
    pending for one of the side's soldiers (standing, crossed out or walking, inside a base or not), no
    flick left, in last stand."""
    turn = state.turn
    if turn is None:
        return [state]
    own = [s.id for s in state.soldiers if s.side == turn.side] or ["nobody"]
    changed = [
        dataclasses.replace(turn, sent=not turn.sent),
        dataclasses.replace(turn, chain=Chain(rng.choice(own), 1, 1), flicked=True),
        dataclasses.replace(turn, chain=Chain(rng.choice(own), 2, 3), flicks_left=0, flicked=True),
        dataclasses.replace(turn, flicks_left=0, flicked=True),
        dataclasses.replace(turn, flicks_left=2, last_stand=True, flicked=rng.random() < 0.5),
    ]
    return [state, *(evolve(state, turn=other) for other in changed)]


def same_answers(state: State) -> None:
    assert json.dumps(turn_options(state)) == json.dumps(reference_query.turn_options(state))
    for side in ("blue", "red"):
        assert flickable(state, side) == reference_query.flickable(state, side)
        assert json.dumps(send_options(state, side)) == json.dumps(reference_query.send_options(state, side))


@pytest.mark.parametrize("path", GOLDEN_FILES, ids=lambda path: path.stem)
def test_turn_options_are_the_first_written_answers_on_the_golden_pages(path: Any) -> None:
    record = json.loads(path.read_text())
    replay = Replay(RuleSet.from_json(record["rules"]), int(record["seed"], 16), record["actions"])
    assert replay.error is None
    rng = random.Random(path.stem)
    for index in range(replay.valid + 1):
        for state in variants(replay.states(index), rng):
            same_answers(state)


@PAGE_SETTINGS
@given(varied_rule_sets(max_bases=3, max_soldiers=6), seeds(), player_randoms())
def test_turn_options_are_the_first_written_answers(rules: RuleSet, seed: int, rng: random.Random) -> None:
    states = page_states(rules, seed, rng)
    for state in rng.sample(states, min(10, len(states))):
        for variant in variants(state, rng):
            same_answers(variant)
            same_answers(dataclasses.replace(variant))  # a page just opened: no views carried over


def test_a_chain_lunger_inside_a_base_is_named_last_and_never_walks() -> None:
    page = Page()
    page.base("blue", 500.0, 1100.0, men=0)
    page.base("blue", 250.0, 1100.0, men=0)
    page.base("red", 500.0, 300.0)
    page.man("blue", 500.0, 1100.0, "lunger")
    page.man("blue", 520.0, 1100.0, "walker")
    state = page.build(chain=Chain("lunger", 1, 1), flicked=True, flicks=0)
    send = send_options(state, "blue")
    assert send == reference_query.send_options(state, "blue")
    assert send["men"]["b1"] == ["walker"] and send["max"] == 1
