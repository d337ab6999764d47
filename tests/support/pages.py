"""Pages for the benchmarks and tests, set up and ready to flick: made over HTTP or by the engine."""

from __future__ import annotations

from typing import Any

import httpx

from dotfight.engine import RuleSet, State, apply, new_page

# Blue's quick setup, then both sides ready: the page's first turn of play is next (version 3).
SETUP_MOVES: tuple[tuple[str, dict[str, Any]], ...] = (
    ("blue", {"type": "quick_setup"}),
    ("blue", {"type": "ready"}),
    ("red", {"type": "ready"}),
)
READY_ACTIONS = tuple(action for _, action in SETUP_MOVES)


def engine_page_ready_to_play(preset: str = "quick", seed: int = 1) -> State:
    """A page of `preset` set up by the engine alone: blue's turn of play is next."""
    state = new_page(RuleSet.preset(preset), seed=seed)
    for side, action in SETUP_MOVES:
        state, _ = apply(state, side, action)
    return state


def page_ready_to_play(http: httpx.Client, preset: str = "classic") -> tuple[str, str]:
    """Creates a pass-one-phone page on `http`'s server and sets it up; returns (page id, seat token)."""
    created = http.post("/api/pages", json={"preset": preset, "mode": "local"}).json()
    page_id, token = created["id"], created["seats"]["blue"]
    for version, action in enumerate(READY_ACTIONS):
        http.post(
            f"/api/pages/{page_id}/actions",
            json={"action": action, "version": version},
            headers={"Authorization": f"Bearer {token}"},
        ).raise_for_status()
    return page_id, token
