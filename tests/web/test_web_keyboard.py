"""Keyboard and screen-reader play: a soldier is chosen and a flick aimed by keys (angle and power),
each step said in words, and what the flick did is announced in the live region."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from web_helpers import Phone, log, page_ready_to_flick

pytestmark = pytest.mark.browser


def test_a_flick_by_keys_is_announced(server: str, phone: Any, screens: Path) -> None:
    page_id, token = page_ready_to_flick(server)
    p = Phone(phone, server)
    p.goto(f"/p/{page_id}#seat={token}")
    st = p.state()
    pull_max = p.page.evaluate("window.dotfight.screen().model.rules.pull_max")
    p.page.focus(".stage canvas")
    said = p.page.locator("#said")
    p.page.keyboard.press("n")  # the first soldier (top to bottom, left to right), aimed at his nearest enemy
    assert "soldier 1 of" in said.inner_text() and "power 50%" in said.inner_text()
    p.page.keyboard.press("n")  # the next one
    assert "soldier 2 of" in said.inner_text()
    for _ in range(2):
        p.page.keyboard.press("ArrowUp")  # +5 % each
    p.page.keyboard.press("Shift+ArrowUp")  # +1 %
    assert "power 61%" in said.inner_text()
    first = said.inner_text()
    p.page.keyboard.press("ArrowRight")  # 5° clockwise
    p.page.keyboard.press("Shift+ArrowLeft")  # 1° back

    def deg(text: str) -> int:
        return int(text.split("aim ")[1].split("°")[0])

    assert (deg(said.inner_text()) - deg(first)) % 360 == 4
    assert p.page.evaluate("!!window.dotfight.screen().state.overlay.aim")
    p.shot(screens, "keyboard-aim")
    # The soldier chosen: the second flickable one, ordered as the keys walk them.
    mine = sorted(
        (s for s in st["soldiers"] if s["side"] == "blue" and s["alive"] and not s["on_road"]),
        key=lambda s: (s["y"], s["x"]),
    )
    chosen = mine[1]
    foes = [s for s in st["soldiers"] if s["side"] == "red" and s["alive"]]
    foe = min(foes, key=lambda f: math.hypot(f["x"] - chosen["x"], f["y"] - chosen["y"]))
    p.page.keyboard.press("Enter")
    p.idle()
    action = log(server, page_id)["entries"][-1]["action"]
    assert action["type"] == "flick" and action["soldier"] == chosen["id"] and action["kind"] == "snipe"
    dx, dy = action["vector"]
    assert math.hypot(dx, dy) == pytest.approx(0.61 * pull_max, abs=0.1)
    aimed = math.atan2(foe["y"] - chosen["y"], foe["x"] - chosen["x"]) + math.radians(4)
    assert math.atan2(dy, dx) == pytest.approx(aimed, abs=0.002)
    # What happened, in words, for a screen reader.
    text = said.inner_text()
    assert "Blue's snipe crossed out" in text
    p.shot(screens, "keyboard-announced")
    assert p.errors == []


def test_escape_puts_the_aim_down_and_keys_wait_their_turn(server: str, phone: Any) -> None:
    page_id, token = page_ready_to_flick(server)
    p = Phone(phone, server)
    p.goto(f"/p/{page_id}")
    p.page.focus(".stage canvas")
    p.page.keyboard.press("n")
    assert "watching" in p.page.locator("#said").inner_text().lower()
    p.goto(f"/p/{page_id}#seat={token}")
    p.page.focus(".stage canvas")
    p.page.keyboard.press("n")
    p.page.keyboard.press("k")  # snipe ↔ lunge, the aim kept
    assert p.page.locator("#said").inner_text().startswith("Lunge with soldier 1")
    assert p.page.locator("[data-kind=lunge]").get_attribute("aria-checked") == "true"
    p.page.keyboard.press("Escape")
    assert "Aim put down" in p.page.locator("#said").inner_text()
    assert not p.page.evaluate("!!window.dotfight.screen().state.overlay.aim")
    assert len(log(server, page_id)["entries"]) == 3
