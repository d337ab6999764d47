"""What a page costs in memory while a server holds it (issue 12): the state's parts keep no instance
dictionary, and the ids every page repeats are one string for all pages."""

from __future__ import annotations

import dataclasses
import functools
import json
import pickle

from dotfight.engine import RuleSet, State, apply, new_page
from dotfight.engine import state as state_module
from dotfight.engine.state import evolve, evolve_soldiers
from dotfight.engine.values import Base, Chain, Convoy, Cross, Ink, Soldier, Turn
from tests.support.pages import engine_page_ready_to_play


def flicked_page() -> State:
    page = engine_page_ready_to_play()
    shooter = next(s.id for s in page.soldiers if s.side == "blue")
    page, _ = apply(
        page, "blue", {"type": "flick", "soldier": shooter, "kind": "snipe", "vector": [0.0, 40.0]}
    )
    return page


def test_the_parts_of_a_state_have_no_instance_dictionary() -> None:
    page = flicked_page()
    assert page.turn is not None and page.ink and page.bases and page.soldiers
    parts = [page.turn, page.ink[0], page.bases[0], page.soldiers[0]]
    parts += [Cross("b1s1", "snipe", "blue"), Chain("b1s1", 2, 1), Convoy("blue", "b1", "b2", ("b1s1",))]
    for part in parts:
        assert not hasattr(part, "__dict__"), type(part).__name__
    assert {type(part) for part in parts} == {Turn, Ink, Base, Soldier, Cross, Chain, Convoy}


def test_pages_share_their_ids_whether_set_up_or_read_back() -> None:
    one, other = flicked_page(), flicked_page()
    restored = State.from_json(json.loads(json.dumps(one.to_json())))
    assert restored == one
    for a, b, c in zip(one.soldiers, other.soldiers, restored.soldiers, strict=True):
        assert a.id is b.id is c.id
        assert a.side is c.side
    assert all(a.id is c.id for a, c in zip(one.bases, restored.bases, strict=True))
    assert restored.ink[0].soldier is one.ink[0].soldier


def test_a_state_still_pickles_and_compares_whole() -> None:
    page = flicked_page()
    assert pickle.loads(pickle.dumps(page)) == page
    fresh, _ = apply(new_page(RuleSet.preset("quick"), seed=7), "blue", {"type": "quick_setup"})
    assert pickle.loads(pickle.dumps(fresh)).soldiers == fresh.soldiers


def test_pages_set_up_alike_share_their_layout_views_and_others_get_their_own() -> None:
    one, other = flicked_page(), flicked_page()
    assert one.soldier_index is other.soldier_index
    assert one.base_index is other.base_index
    assert one.base_arrays is other.base_arrays
    assert one.soldier_index == {s.id: i for i, s in enumerate(one.soldiers)}
    drawn = new_page(RuleSet.preset("quick"), seed=7)
    for side, x, y in (("blue", 500, 1100), ("red", 500, 300)):
        drawn, _ = apply(drawn, side, {"type": "draw_base", "x": x, "y": y, "r": 80})
    assert drawn.base_arrays is not one.base_arrays
    assert drawn.base_arrays.xs == [500.0, 500.0]
    assert drawn.base_index == {"b1": 0, "b2": 1}
    assert drawn.soldier_index == {s.id: i for i, s in enumerate(drawn.soldiers)}


def test_pages_of_one_preset_share_their_rules() -> None:
    one = new_page(RuleSet.preset("quick"), seed=1)
    other = new_page(RuleSet.preset("quick"), seed=2)
    restored = State.from_json(json.loads(json.dumps(other.to_json())))
    assert one.rules is other.rules is restored.rules
    send_max = one.rules.send_max + 1
    longer = new_page(RuleSet.preset("quick").replace(send_max=send_max), seed=3)
    assert longer.rules is not one.rules and longer.rules.send_max == send_max


def test_evolve_carries_exactly_the_views_that_stay_valid() -> None:
    """A new state keeps its predecessor's views while they hold: the id indexes and the arrays while the
    soldiers stay, the arrays as the ones to patch from when a soldier changed, none once the bases did;
    and no state holds a view `evolve` does not know of."""
    page = flicked_page()
    page.arrays  # noqa: B018 -- built, with the id indexes
    cached = {name for name, value in vars(State).items() if isinstance(value, functools.cached_property)}
    assert cached <= set(state_module._CACHES)
    same = evolve(page, version=page.version + 1)
    assert same.__dict__["arrays"] is page.arrays and "_earlier_arrays" not in same.__dict__
    moved = evolve_soldiers(page, {0: dataclasses.replace(page.soldiers[0], x=page.soldiers[0].x + 1)})
    assert "arrays" not in moved.__dict__ and moved.__dict__["_earlier_arrays"] is page.arrays
    assert moved.soldier_index is page.soldier_index
    later = evolve(moved, rng=moved.rng + 1)  # not yet patched: the earlier arrays go on
    assert later.__dict__["_earlier_arrays"] is page.arrays and "arrays" not in later.__dict__
    assert moved.arrays.xs[moved.arrays.n_bases] == page.soldiers[0].x + 1  # patched for the moved man
    assert "_earlier_arrays" not in moved.__dict__  # once patched, a page keeps one set of views
    after = evolve(moved, rng=moved.rng + 1)  # patched: its own arrays go on, the earlier ones not
    assert after.__dict__["arrays"] is moved.arrays and "_earlier_arrays" not in after.__dict__
    redrawn = evolve(page, bases=page.bases[:-1])
    assert set(redrawn.__dict__) == {f.name for f in dataclasses.fields(State)}
