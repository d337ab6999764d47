"""Until every server sends turn options (C6), web/js/options.js answers them from the snapshot's own
fields. That fallback must say what the engine's `turn_options` says, along real pages: who may
flick, the kinds, the chain, steadiness, last stand, a bonus flick, stop and end turn, and whether a
send is possible (and from which bases)."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from dotfight.engine import EngineError, RuleSet, State, apply, new_page, turn_options

pytestmark = pytest.mark.browser

FALLBACK = """async (snaps) => {
  const { turnOptions } = await import('/js/options.js');
  const { modelFromSnapshot } = await import('/js/model.js');
  return snaps.map((s) => turnOptions(modelFromSnapshot(s)));
}"""


def states_along_pages(pages: int) -> list[State]:
    """States of play along a few random pages (flicks of both kinds, sends, stops)."""
    rng = random.Random(3)
    found: list[State] = []
    for seed in range(pages):
        state = new_page(RuleSet.preset(rng.choice(["quick", "classic"])), seed)
        for side, kind in [("blue", "quick_setup"), ("blue", "ready"), ("red", "ready")]:
            state, _ = apply(state, side, {"type": kind})
        for _ in range(50):
            options = turn_options(state)
            if options is None:
                break
            found.append(state)
            side = options["side"]
            roll = rng.random()
            if options["send"] and roll < 0.2:
                source = rng.choice(list(options["send"]["from"]))
                to = rng.choice(options["send"]["from"][source])
                base = next(b for b in state.bases if b.id == source)
                men = [
                    s.id for s in state.soldiers
                    if s.side == side and s.alive and not s.on_road and base.contains(s.x, s.y)
                ][: rng.randint(1, options["send"]["max"])]  # fmt: skip
                action: dict[str, Any] = {"type": "send", "from": source, "to": to, "soldiers": men}
            elif options["can_stop"] and roll < 0.35:
                action = {"type": "stop"}
            else:
                soldier = rng.choice(options["flickable"])
                pull = rng.uniform(30, 300)
                angle = rng.uniform(0, 6.283)
                action = {
                    "type": "flick", "soldier": soldier, "kind": rng.choice(options["kinds"]),
                    "vector": [round(math.cos(angle) * pull, 1), round(math.sin(angle) * pull, 1)],
                }  # fmt: skip
            try:
                state, _ = apply(state, side, action)
            except EngineError:
                continue
    return found


def test_the_fallback_says_what_the_engine_says(server: str, phone: Any) -> None:
    states = states_along_pages(4)
    assert len(states) > 100
    page = phone.new_page()
    page.goto(server + "/")
    got = page.evaluate(FALLBACK, [s.snapshot() for s in states])
    for state, fallback in zip(states, got, strict=True):
        want = turn_options(state)
        assert want is not None
        where = f"version {state.version}: {want} / {fallback}"
        for key in ("side", "flicks_left", "kinds", "chain", "steadiness", "last_stand", "bonus", "can_stop"):
            assert fallback[key] == want[key], f"{key} at {where}"
        assert sorted(fallback["flickable"]) == sorted(want["flickable"]), where
        assert (fallback["send"] is None) == (want["send"] is None), where
        if want["send"]:
            assert sorted(fallback["send"]["from"]) == sorted(want["send"]["from"]), where
