"""Real engine pages for the people model's tests: a quick page through setup, and legal moves in play."""

from __future__ import annotations

from typing import Any

from dotfight.engine import RuleSet, State, apply, flickable, new_page, send_options

SETUP: list[tuple[str, dict[str, Any]]] = [
    ("blue", {"type": "quick_setup"}),
    ("blue", {"type": "ready"}),
    ("red", {"type": "ready"}),
]


def blank_page(seed: int = 7) -> State:
    """Returns a new quick page (blue draws first)."""
    return new_page(RuleSet.preset("quick"), seed=seed)


def in_play(seed: int = 7) -> State:
    """Returns a quick page set up and at blue's first turn of play."""
    page = blank_page(seed)
    for side, action in SETUP:
        page, _ = apply(page, side, action)
    return page


def flick(page: State, pick: int = 0, vector: tuple[float, float] = (0.0, -60.0)) -> dict[str, Any]:
    """Returns a legal snipe of the side to act (its `pick`-th flickable soldier)."""
    assert page.actor is not None
    soldiers = flickable(page, page.actor)
    return {
        "type": "flick",
        "soldier": soldiers[pick % len(soldiers)],
        "kind": "snipe",
        "vector": list(vector),
    }


def send(page: State) -> dict[str, Any]:
    """Returns a legal send of one soldier by the side to act (an action that does not end its turn)."""
    assert page.actor is not None
    options = send_options(page, page.actor)
    start, ends = next(iter(options["from"].items()))
    return {"type": "send", "from": start, "to": ends[0], "soldiers": [options["men"][start][0]]}
