"""Pages brought to a wanted moment over HTTP: a seeded local page replayed in the engine first, so a
flick that makes a lunge chain or two with one bullet is found without drawing any dice on the server."""

from __future__ import annotations

import math
from typing import Any

import httpx

from dotfight.engine import EngineError, RuleSet, apply, new_page


def _post(http: httpx.Client, page_id: str, token: str, action: dict[str, Any], version: int) -> None:
    res = http.post(
        f"/api/pages/{page_id}/actions",
        json={"action": action, "version": version},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert res.status_code == 200, res.text


def seeded_page_with(base: str, wanted: str, seeds: range = range(1, 400)) -> tuple[str, str]:
    """A local Quick page where blue's first flick made `wanted` ("lunge_again": a chain is pending;
    "two_with_one_bullet": a bonus flick is pending); returns its id and token."""
    rules = RuleSet.preset("quick")
    kind = "lunge" if wanted == "lunge_again" else "snipe"
    for seed in seeds:
        state = new_page(rules, seed)
        setup: list[tuple[str, dict[str, Any]]] = [
            ("blue", {"type": "quick_setup"}), ("blue", {"type": "ready"}), ("red", {"type": "ready"}),
        ]  # fmt: skip
        for side, step in setup:
            state, _ = apply(state, side, step)
        snap = state.snapshot()
        blues = [s for s in snap["soldiers"] if s["side"] == "blue"]
        reds = [s for s in snap["soldiers"] if s["side"] == "red"]
        for b in blues:
            for r in reds:
                d = math.hypot(r["x"] - b["x"], r["y"] - b["y"])
                for power in (0.3, 0.5, 0.7, 1.0):
                    pull = power * rules.pull_max
                    action: dict[str, Any] = {
                        "type": "flick", "soldier": b["id"], "kind": kind,
                        "vector": [round((r["x"] - b["x"]) / d * pull, 1),
                                   round((r["y"] - b["y"]) / d * pull, 1)],
                    }  # fmt: skip
                    try:
                        _, events = apply(state, "blue", action)
                    except EngineError:
                        continue
                    if any(
                        e["type"] == "bonus" and e["reason"] == wanted and e.get("credits", 1) > 0
                        for e in events
                    ):
                        return _make(base, seed, [a for _, a in setup] + [action])
    raise AssertionError(f"no seed gives {wanted}")


def _make(base: str, seed: int, actions: list[dict[str, Any]]) -> tuple[str, str]:
    with httpx.Client(base_url=base, timeout=10) as http:
        created = http.post("/api/pages", json={"preset": "quick", "mode": "local", "seed": seed}).json()
        page_id, token = created["id"], created["seats"]["blue"]
        for version, action in enumerate(actions):
            _post(http, page_id, token, action, version)
    return page_id, token
