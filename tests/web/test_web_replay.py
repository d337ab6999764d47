"""A finished stretch of a page replayed on a phone: scrubbed back and forth, stepped and played."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import httpx
import pytest
from web_helpers import Phone, page_ready_to_flick

pytestmark = pytest.mark.browser


def play_some_page(base: str, flicks: int) -> tuple[str, list[dict[str, Any]]]:
    """Plays a local Quick page over HTTP (quick setup, both ready, a few aimed flicks); returns its log."""
    page_id, token = page_ready_to_flick(base)
    with httpx.Client(base_url=base, timeout=10) as http:
        auth = {"Authorization": f"Bearer {token}"}

        def act(action: dict[str, Any]) -> None:
            version = http.get(f"/api/pages/{page_id}").json()["version"]
            res = http.post(
                f"/api/pages/{page_id}/actions", json={"action": action, "version": version}, headers=auth
            )
            assert res.status_code == 200, res.text

        done = 0
        while done < flicks:
            snap = http.get(f"/api/pages/{page_id}").json()
            if snap["phase"] != "play":
                break
            side = snap["side_to_act"]
            chain = snap["turn"].get("chain")
            if chain:
                act({"type": "stop"})
                continue
            mine = [s for s in snap["soldiers"] if s["side"] == side and s["alive"] and not s["on_road"]]
            foes = [s for s in snap["soldiers"] if s["side"] != side and s["alive"]]
            m, f = min(
                ((a, b) for a in mine for b in foes),
                key=lambda p: math.hypot(p[0]["x"] - p[1]["x"], p[0]["y"] - p[1]["y"]),
            )
            act(
                {
                    "type": "flick",
                    "soldier": m["id"],
                    "kind": "snipe",
                    "vector": [f["x"] - m["x"], f["y"] - m["y"]],
                }
            )
            done += 1
        entries: list[dict[str, Any]] = http.get(f"/api/pages/{page_id}/log").json()["entries"]
        return page_id, entries


def inks_after(entries: list[dict[str, Any]], n: int) -> int:
    return sum(1 for e in entries[:n] for ev in e["events"] if ev["type"] == "ink")


def test_replay_scrubbed_back_and_forth(server: str, phone: Any, screens: Path) -> None:
    page_id, entries = play_some_page(server, flicks=4)
    moves = len(entries)
    p = Phone(phone, server)
    p.goto(f"/p/{page_id}#view=replay")
    st = p.state()
    assert st["screen"] == "replay" and st["moves"] == moves and st["at"] == moves
    assert st["inkCount"] == inks_after(entries, moves) >= 4
    p.shot(screens, "replay-end")

    # One move back, twice: the last lines leave the page; the scrubber follows.
    for k in (1, 2):
        p.tap("[data-action=back]")
        p.idle()
        st = p.state()
        assert st["at"] == moves - k and st["inkCount"] == inks_after(entries, moves - k)
    assert p.page.locator("input[type=range]").input_value() == str(moves - 2)

    # Scrubbed to the blank page, then to the middle.
    scrub = p.page.locator("input[type=range]")
    scrub.evaluate("(el) => { el.value = '0'; el.dispatchEvent(new Event('input')); }")
    p.idle()
    st = p.state()
    assert st["at"] == 0 and st["inkCount"] == 0 and st["soldiers"] == []
    scrub.evaluate("(el) => { el.value = '4'; el.dispatchEvent(new Event('input')); }")
    p.idle()
    st = p.state()
    assert st["at"] == 4 and st["phase"] == "play" and st["inkCount"] == inks_after(entries, 4)
    p.shot(screens, "replay-middle")

    # One move on, animated: the intended aim shows next to the line drawn.
    p.tap("[data-action=forward]")
    p.idle()
    assert p.state()["at"] == 5
    p.shot(screens, "replay-step")

    # Played to the end at 4×.
    p.tap("[data-action=speed]")
    p.tap("[data-action=speed]")
    assert p.page.locator("[data-action=speed]").inner_text().strip() == "4×"
    p.tap("[data-action=play]")
    p.page.wait_for_function(
        "(() => { const s = window.dotfight.state(); return !s.playing && s.at === s.moves; })()",
        timeout=30000,
    )
    assert p.state()["inkCount"] == inks_after(entries, moves)
    assert p.errors == []
