"""A simple player that picks a legal action from the public snapshot alone."""

from __future__ import annotations

import math
from typing import Any


def nearest_snipe_action(snapshot: dict[str, Any], resign_from_version: int | None = None) -> dict[str, Any]:
    """Picks a legal action for the side to act: quick setup, accept the jotting, then full-power snipes
    from the flickable soldier nearest to a living enemy, at that enemy. Chains are stopped at once, so
    the player never lunges. With `resign_from_version`, it resigns once the page reaches that version
    (so that no test can run forever)."""
    phase = snapshot["phase"]
    if phase == "bases":
        return {"type": "quick_setup"}
    if phase == "positioning":
        return {"type": "ready"}
    if resign_from_version is not None and snapshot["version"] >= resign_from_version:
        return {"type": "resign"}
    side = snapshot["side_to_act"]
    turn = snapshot["turn"]
    if turn.get("chain"):  # only lunges start chains
        return {"type": "stop"}
    living = [soldier for soldier in snapshot["soldiers"] if soldier["alive"]]
    shooters = [s for s in living if s["side"] == side and not s["on_road"]]
    targets = [s for s in living if s["side"] != side]
    if not shooters or not targets:
        return {"type": "stop"} if turn.get("flicked") else {"type": "resign"}
    shooter, target = min(
        ((a, b) for a in shooters for b in targets),
        key=lambda pair: math.hypot(pair[0]["x"] - pair[1]["x"], pair[0]["y"] - pair[1]["y"]),
    )
    dx, dy = target["x"] - shooter["x"], target["y"] - shooter["y"]
    length = math.hypot(dx, dy) or 1.0
    pull = float(snapshot["rules"]["pull_max"])
    return {
        "type": "flick",
        "soldier": shooter["id"],
        "kind": "snipe",
        "vector": [dx / length * pull, dy / length * pull],
    }
