"""Defect 1: nothing moves or resizes under the finger during a pull, and the pull sent is the pull made.

At 360 × 640, 390 × 844 and 412 × 915: a soldier is pressed and pulled 80 CSS px; mid-pull the page,
the top bar and the bottom bar have not moved or changed size, and the flick sent is exactly 80 CSS px
in page units of the page as it stood when the finger touched down.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from web_helpers import Phone, aim_at_nearest_enemy, log, page_ready_to_flick

from tests.support.chromium import PHONE

pytestmark = pytest.mark.browser

BOXES = """() => Object.fromEntries(['.stage canvas', '.topbar', '.bottombar'].map((sel) => {
  const r = document.querySelector(sel).getBoundingClientRect();
  return [sel, [r.left, r.top, r.width, r.height]];
}))"""


@pytest.mark.parametrize("size", [(360, 640), (390, 844), (412, 915)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_page_stays_still_under_a_pull(
    browser: Any, server: str, screens: Path, size: tuple[int, int]
) -> None:
    page_id, token = page_ready_to_flick(server)
    ctx = browser.new_context(**{**PHONE, "viewport": {"width": size[0], "height": size[1]}})
    try:
        p = Phone(ctx, server)
        p.goto(f"/p/{page_id}#seat={token}")
        soldier, (ux, uy) = aim_at_nearest_enemy(p.state())
        before = p.page.evaluate(BOXES)
        units_per_px = 1000 / before[".stage canvas"][2]
        sx, sy = p.client(soldier["x"], soldier["y"])
        pull_px = 80.0
        p.touch("touchStart", sx, sy)
        for k in range(1, 11):
            f = k / 10
            p.touch("touchMove", sx - ux * pull_px * f, sy - uy * pull_px * f)
        during = p.page.evaluate(BOXES)
        p.shot(screens, f"defect1-pull-{size[0]}x{size[1]}")
        # The hint says the power while pulling; it must not reflow anything.
        assert "power" in p.page.locator(".hint").inner_text()
        for sel, box in before.items():
            assert during[sel] == pytest.approx(box, abs=0.01), (
                f"{sel} moved mid-pull: {box} -> {during[sel]}"
            )
        p.touch("touchEnd")
        p.idle()
        flick = log(server, page_id)["entries"][-1]["action"]
        assert flick["type"] == "flick" and flick["soldier"] == soldier["id"]
        dx, dy = flick["vector"]
        # The pull measured from the soldier, in units of the page as it stood at touch-down.
        assert math.hypot(dx, dy) == pytest.approx(pull_px * units_per_px, abs=0.6)
        assert math.atan2(dy, dx) == pytest.approx(math.atan2(uy, ux), abs=0.01)
        assert p.errors == []
    finally:
        ctx.close()


def test_a_resize_mid_pull_waits_for_the_finger(browser: Any, server: str) -> None:
    """Even when the window itself changes size mid-pull, the finger keeps the transform of touch-down."""
    page_id, token = page_ready_to_flick(server)
    ctx = browser.new_context(**PHONE)
    try:
        p = Phone(ctx, server)
        p.goto(f"/p/{page_id}#seat={token}")
        soldier, (ux, uy) = aim_at_nearest_enemy(p.state())
        width = p.page.evaluate("document.querySelector('.stage canvas').getBoundingClientRect().width")
        sx, sy = p.client(soldier["x"], soldier["y"])
        p.touch("touchStart", sx, sy)
        p.touch("touchMove", sx - ux * 40, sy - uy * 40)
        p.page.set_viewport_size({"width": 390, "height": 600})  # e.g. the browser's own bar slid in
        p.page.wait_for_timeout(300)
        p.touch("touchMove", sx - ux * 100, sy - uy * 100)
        p.touch("touchEnd")
        p.idle()
        dx, dy = log(server, page_id)["entries"][-1]["action"]["vector"]
        assert math.hypot(dx, dy) == pytest.approx(100 * 1000 / width, abs=0.6)
        # Once the finger lifted the page took its new size.
        assert (
            p.page.evaluate("document.querySelector('.stage canvas').getBoundingClientRect().width") < width
        )
    finally:
        ctx.close()
