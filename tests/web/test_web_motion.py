"""The pen at work: ink drawn stroke by stroke with the pen tip showing — or at once with reduced motion."""

from __future__ import annotations

from typing import Any

import pytest
from web_helpers import Phone, aim_at_nearest_enemy, flick_path, page_ready_to_flick

from tests.support.chromium import PHONE

pytestmark = pytest.mark.browser

# Records, on every redraw of the page, whether a line was being drawn part-way with the pen tip on it.
WATCH_THE_PEN = """() => {
  const renderer = window.dotfight.screen().renderer;
  const draw = renderer.draw.bind(renderer);
  window.__pen = { tip: 0, partial: 0 };
  renderer.draw = () => {
    const o = renderer.state.overlay;
    if (o.penTip) window.__pen.tip += 1;
    if (o.liveInk && o.liveInk.upTo > 0) window.__pen.partial += 1;
    draw();
  };
}"""


def flick_and_watch(browser: Any, server: str, reduced: bool) -> dict[str, int]:
    page_id, token = page_ready_to_flick(server)
    ctx = browser.new_context(**PHONE, reduced_motion="reduce" if reduced else "no-preference")
    try:
        p = Phone(ctx, server)
        p.goto(f"/p/{page_id}#seat={token}")
        assert p.state()["tool"] == "flick"
        p.page.evaluate(WATCH_THE_PEN)
        soldier, direction = aim_at_nearest_enemy(p.state())
        p.drag(flick_path(soldier, direction, 250))
        p.idle()
        assert p.state()["inkCount"] == 1
        pen: dict[str, int] = p.page.evaluate("window.__pen")
        assert p.errors == []
        return pen
    finally:
        ctx.close()


def test_ink_is_drawn_at_pen_speed(server: str, browser: Any) -> None:
    pen = flick_and_watch(browser, server, reduced=False)
    # Many frames of a part-drawn line with the pen tip on it.
    assert pen["tip"] >= 5 and pen["partial"] >= 5


def test_reduced_motion_shows_results_at_once(server: str, browser: Any) -> None:
    pen = flick_and_watch(browser, server, reduced=True)
    assert pen == {"tip": 0, "partial": 0}
