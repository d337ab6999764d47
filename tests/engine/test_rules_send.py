"""RULES.md §7, the send: the road, its refusals, one enemy turn on the road, arrival, the shot intruder."""

from __future__ import annotations

import dataclasses
import math

import pytest

from dotfight.engine import IllegalAction, State
from tests.engine.conftest import Page, flick, of_type, send, types


def _two_blue_bases(page: Page, men_in_second: int = 0) -> State:
    page.base("blue", 500, 1000, 80)  # b1, full
    page.base("blue", 500, 1250, 80, men=men_in_second)  # b2
    page.base("red", 500, 300, 80)  # b3
    return page.build()


def test_the_convoy_walks_single_file_centred_on_the_midpoint(page: Page) -> None:
    state = _two_blue_bases(page)
    after, events = send(state, "blue", "b1", "b2", ["b1s2", "b1s3", "b1s4"])
    assert events == [
        {
            "type": "send",
            "side": "blue",
            "from": "b1",
            "to": "b2",
            "soldiers": [
                {"id": "b1s2", "x": 500.0, "y": 1146.0},
                {"id": "b1s3", "x": 500.0, "y": 1125.0},
                {"id": "b1s4", "x": 500.0, "y": 1104.0},
            ],
        }
    ]
    assert all(after.soldier(i).on_road for i in ("b1s2", "b1s3", "b1s4"))
    # The source wall thins at once; the turn still owes its flick.
    assert after.garrison(after.base("b1")) == 5
    assert (
        after.turn is not None and after.turn.sent and after.turn.flicks_left == 1 and after.actor == "blue"
    )
    assert after.convoys[0].soldiers == ("b1s2", "b1s3", "b1s4")


def test_a_soldier_on_the_road_holds_no_wall_and_cannot_be_flicked(page: Page) -> None:
    state = _two_blue_bases(page, men_in_second=0)
    state, _ = send(state, "blue", "b1", "b2", ["b1s2"])
    with pytest.raises(IllegalAction) as refusal:
        flick(state, "blue", "b1s2", "snipe", (0, -300))
    assert refusal.value.reason == "on_road"
    assert "b1s2" not in state.flickable("blue")


@pytest.mark.parametrize(
    ("source", "to", "soldiers", "reason"),
    [
        ("b1", "b2", [], "send_size"),
        ("b1", "b2", ["b1s1", "b1s2", "b1s3", "b1s4", "b1s5", "b1s6"], "send_size"),
        ("b1", "b1", ["b1s1"], "same_base"),
        ("b1", "b3", ["b1s1"], "not_your_base"),
        ("b3", "b1", ["b3s1"], "not_your_base"),
        ("b2", "b1", ["b1s1"], "not_in_base"),
        ("b1", "b2", ["b3s1"], "not_your_soldier"),
    ],
)
def test_send_refusals(page: Page, source: str, to: str, soldiers: list[str], reason: str) -> None:
    state = _two_blue_bases(page)
    with pytest.raises(IllegalAction) as refusal:
        send(state, "blue", source, to, soldiers)
    assert refusal.value.code == "illegal_action" and refusal.value.reason == reason


def test_one_send_a_turn(page: Page) -> None:
    state = _two_blue_bases(page)
    state, _ = send(state, "blue", "b1", "b2", ["b1s1"])
    with pytest.raises(IllegalAction) as refusal:
        send(state, "blue", "b1", "b2", ["b1s2"])
    assert refusal.value.reason == "already_sent"


def test_a_dead_soldier_is_not_sent(page: Page) -> None:
    page.base("blue", 500, 1000, 80)
    page.base("blue", 500, 1250, 80, men=0)
    page.base("red", 500, 300, 80)
    state = page.build()
    index = state.soldier_index["b1s2"]
    soldiers = list(state.soldiers)
    soldiers[index] = dataclasses.replace(soldiers[index], alive=False)
    state = dataclasses.replace(state, soldiers=tuple(soldiers))
    with pytest.raises(IllegalAction) as refusal:
        send(state, "blue", "b1", "b2", ["b1s2"])
    assert refusal.value.reason == "soldier_dead"


def test_a_send_that_leaves_nobody_to_flick_is_refused(page: Page) -> None:
    page.base("blue", 500, 1000, 80, men=1)
    page.base("blue", 500, 1250, 80, men=0)
    page.base("red", 500, 300, 80)
    state = page.build()
    with pytest.raises(IllegalAction) as refusal:
        send(state, "blue", "b1", "b2", ["b1s1"])
    assert refusal.value.reason == "no_soldier_left"


def test_the_chain_lunger_cannot_walk_but_others_may_during_a_chain(page: Page) -> None:
    soft = 0.2 * math.hypot(1000, 1400) + 0.8 * math.hypot(1000, 1400) * (1 / 300) ** 2
    page.base("blue", 500, 700 + soft, 80, men=0)  # b1: where the runner lands
    page.man("blue", 450, 700 + soft, "stayer")
    page.base("blue", 150, 1250, 60, men=0)  # b2
    page.man("blue", 500, 700, "runner")
    page.man("red", 500, 800, "victim")
    page.man("red", 950, 50)
    state, _ = flick(page.build(), "blue", "runner", "lunge", (0, 1))
    assert state.turn is not None and state.turn.chain is not None
    assert state.base("b1").contains(state.soldier("runner").x, state.soldier("runner").y)
    with pytest.raises(IllegalAction) as refusal:
        send(state, "blue", "b1", "b2", ["runner"])
    assert refusal.value.reason == "chain_pending"
    after, events = send(state, "blue", "b1", "b2", ["stayer"])
    assert types(events) == ["send"] and after.turn is not None and after.turn.chain is not None


def test_the_convoy_arrives_at_free_spots_at_the_start_of_the_senders_next_turn(page: Page) -> None:
    state = _two_blue_bases(page, men_in_second=2)
    state, _ = send(state, "blue", "b1", "b2", ["b1s2", "b1s3"])
    state, _ = flick(state, "blue", "b1s1", "snipe", (300, 0))
    assert state.actor == "red" and all(state.soldier(i).on_road for i in ("b1s2", "b1s3"))
    state, events = flick(state, "red", "b3s1", "snipe", (300, 0))
    assert types(events)[-2:] == ["arrived", "turn"]
    arrived = events[-2]
    assert arrived["to"] == "b2" and [s["id"] for s in arrived["soldiers"]] == ["b1s2", "b1s3"]
    b2 = state.base("b2")
    living = [s for s in state.soldiers if s.alive]
    for spot in arrived["soldiers"]:
        assert b2.contains(spot["x"], spot["y"])
        assert min(math.dist((spot["x"], spot["y"]), (o.x, o.y)) for o in living if o.id != spot["id"]) >= 14
    assert state.garrison(b2) == 4 and not state.convoys
    assert not any(s.on_road for s in state.soldiers)


def test_an_enemy_lunger_standing_in_the_ring_is_shot_on_arrival(page: Page) -> None:
    page.base("blue", 500, 1000, 80)  # b1
    page.base("blue", 800, 1250, 80, men=0)  # b2: the empty ring
    page.base("red", 500, 300, 80)  # b3
    soft = 0.2 * math.hypot(1000, 1400) + 0.8 * math.hypot(1000, 1400) * (1 / 300) ** 2
    page.man("red", 800, 1250 - soft, "raider")
    state = page.build()
    state, _ = send(state, "blue", "b1", "b2", ["b1s2"])
    state, _ = flick(state, "blue", "b1s1", "snipe", (-300, 0))
    state, events = flick(state, "red", "raider", "lunge", (0, 1))
    assert of_type(events, "landed")[0]["soldier"] == "raider"  # the ring was empty: he stands
    assert types(events)[-3:] == ["arrived", "crossed_out", "turn"]
    assert events[-2] == {
        "type": "crossed_out",
        "soldier": "raider",
        "at": events[-2]["at"],
        "by": "garrison",
        "cause": "shot",
    }
    raider = state.soldier("raider")
    assert not raider.alive and raider.cross is not None and raider.cross.side == "blue"


def test_a_convoy_wiped_out_on_the_road_does_not_arrive(page: Page) -> None:
    page.base("blue", 300, 1100, 80)  # b1
    page.base("blue", 700, 1100, 80, men=0)  # b2
    page.base("red", 500, 300, 80)  # b3
    state = page.build()
    state, _ = send(state, "blue", "b1", "b2", ["b1s1"])  # walks at (500, 1100)
    state, _ = flick(state, "blue", "b1s2", "snipe", (-300, 0))
    state, events = flick(state, "red", "b3s1", "snipe", (0, 300))
    assert "b1s1" in [e["soldier"] for e in of_type(events, "crossed_out")]
    assert "arrived" not in types(events) and not state.convoys
