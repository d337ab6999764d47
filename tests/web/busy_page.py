"""A late page for the browser tests: 50 and more lines of ink, soldiers standing and crossed out."""

from __future__ import annotations

import math
from typing import Any

import httpx

from tests.support.pages import READY_ACTIONS


def busy_page(base: str, lines: int = 56, preset: str = "quick", seed: str = "b05e") -> tuple[str, str]:
    """Plays a pass-one-phone page (of a fixed seed: the same page every run) over HTTP until it holds
    `lines` lines of ink (each flick aimed near, not at, the nearest enemy, so that most miss and many
    stand); returns its id and seat token."""
    with httpx.Client(base_url=base, timeout=10) as http:
        created = http.post("/api/pages", json={"preset": preset, "mode": "local", "seed": seed}).json()
        page_id, token = created["id"], created["seats"]["blue"]
        auth = {"Authorization": f"Bearer {token}"}
        for version, action in enumerate(READY_ACTIONS):
            res = http.post(
                f"/api/pages/{page_id}/actions", json={"action": action, "version": version}, headers=auth
            )
            assert res.status_code == 200, res.text
        for turn in range(lines * 3):
            snap: dict[str, Any] = http.get(f"/api/pages/{page_id}").json()
            if snap["phase"] != "play" or len(snap["ink"]) >= lines:
                break
            if snap["turn"].get("chain"):
                action: dict[str, Any] = {"type": "stop"}
            else:
                side = snap["side_to_act"]
                mine = [s for s in snap["soldiers"] if s["side"] == side and s["alive"] and not s["on_road"]]
                foes = [s for s in snap["soldiers"] if s["side"] != side and s["alive"]]
                m, f = min(
                    ((a, b) for a in mine for b in foes),
                    key=lambda p: (
                        math.hypot(p[0]["x"] - p[1]["x"], p[0]["y"] - p[1]["y"])
                        + 37 * (sum(map(ord, p[0]["id"])) % 3)
                    ),
                )
                turn_by = math.radians(((turn * 7) % 9 - 4) * 6)
                dx, dy = f["x"] - m["x"], f["y"] - m["y"]
                vector = [
                    dx * math.cos(turn_by) - dy * math.sin(turn_by),
                    dx * math.sin(turn_by) + dy * math.cos(turn_by),
                ]
                action = {
                    "type": "flick",
                    "soldier": m["id"],
                    "kind": "snipe",
                    "vector": [round(v, 1) for v in vector],
                }
            res = http.post(
                f"/api/pages/{page_id}/actions",
                json={"action": action, "version": snap["version"]},
                headers=auth,
            )
            assert res.status_code == 200, res.text
    return page_id, token
