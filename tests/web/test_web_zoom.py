"""Defect 6: two fingers pinch-zoom and pan the page, and a flick on the zoomed page is still exact in
page units; a loupe shows what the thumb covers while aiming; in landscape the phone asks to be turned."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from web_helpers import Phone, aim_at_nearest_enemy, flick_path, log, page_ready_to_flick

pytestmark = pytest.mark.browser


def pinch(
    p: Phone, centre: tuple[float, float], start: float, end: float, shift: tuple[float, float] = (0, 0)
) -> None:
    """Two fingers about `centre`, from `start` to `end` CSS px apart, their middle moved by `shift`."""
    cx, cy = centre

    def points(gap: float, f: float) -> list[dict[str, float]]:
        mx, my = cx + shift[0] * f, cy + shift[1] * f
        return [{"x": mx - gap / 2, "y": my, "id": 0}, {"x": mx + gap / 2, "y": my, "id": 1}]

    p.cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": points(start, 0)})
    for k in range(1, 11):
        f = k / 10
        p.cdp.send(
            "Input.dispatchTouchEvent",
            {"type": "touchMove", "touchPoints": points(start + (end - start) * f, f)},
        )
    p.cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})


def test_pinch_zoom_keeps_the_aim_exact(server: str, phone: Any, screens: Path) -> None:
    page_id, token = page_ready_to_flick(server)
    p = Phone(phone, server)
    p.goto(f"/p/{page_id}#seat={token}")
    soldier, direction = aim_at_nearest_enemy(p.state())
    # Zoom in about the soldier: it grows under the fingers and stays put on screen.
    at = p.client(soldier["x"], soldier["y"])
    pinch(p, at, 60, 180)
    p.idle()
    st = p.state()
    assert st["view"]["zoom"] == pytest.approx(3, rel=0.05)
    assert p.client(soldier["x"], soldier["y"]) == pytest.approx(at, abs=2)
    assert st["inkCount"] == 0 and len(log(server, page_id)["entries"]) == 3  # the fingers made no move
    assert p.page.locator(".zoom-reset").is_visible()
    # Two fingers moved together pan the page.
    pinch(p, (195, 400), 100, 100, shift=(30, -20))
    moved = p.client(soldier["x"], soldier["y"])
    assert moved == pytest.approx((at[0] + 30, at[1] - 20), abs=2)
    p.shot(screens, "defect6-zoomed")
    p.tap(".zoom-reset")
    assert p.state()["view"]["zoom"] == 1 and not p.page.locator(".zoom-reset").is_visible()
    pinch(p, at, 60, 180)
    # A flick on the zoomed page: the pull is 60 page units, i.e. three times as many CSS px.
    path = flick_path(soldier, direction, 60)
    p.drag(path, release=False)
    assert p.page.evaluate("!!window.dotfight.screen().state.overlay.loupe")
    p.shot(screens, "defect6-loupe")
    p.touch("touchEnd")
    p.idle()
    action = log(server, page_id)["entries"][-1]["action"]
    dx, dy = action["vector"]
    assert action["type"] == "flick" and math.hypot(dx, dy) == pytest.approx(60, abs=0.2)
    assert math.atan2(dy, dx) == pytest.approx(math.atan2(direction[1], direction[0]), abs=0.004)
    # The next player on this phone gets the whole page.
    assert p.dismiss_handover()
    assert p.state()["view"]["zoom"] == 1
    assert p.errors == []


def test_landscape_asks_to_turn_the_phone(server: str, browser: Any, screens: Path) -> None:
    from tests.support.chromium import PHONE

    page_id, token = page_ready_to_flick(server)
    ctx = browser.new_context(**{**PHONE, "viewport": {"width": 844, "height": 390}})
    try:
        p = Phone(ctx, server)
        p.goto(f"/p/{page_id}#seat={token}")
        hint = p.page.locator(".turn-hint")
        assert hint.is_visible() and "Turn your phone" in hint.inner_text()
        p.shot(screens, "defect6-landscape")
        p.page.set_viewport_size({"width": 390, "height": 844})
        assert not hint.is_visible()
    finally:
        ctx.close()
