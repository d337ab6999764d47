"""Issue 21, item 7: the "No connection" notice fits its bar. It took two lines (93 px) in the bottom
bar's 83 px at 360, 390 and 412 px wide, under the empty row of buttons; now it takes that row too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from web_helpers import Phone, aim_at_nearest_enemy, flick_path, page_ready_to_flick

from tests.support.chromium import PHONE

pytestmark = pytest.mark.browser

FITS = """(() => {
  const bar = document.querySelector('.bottombar').getBoundingClientRect();
  const hint = document.querySelector('.bottombar .hint');
  const r = hint.getBoundingClientRect();
  return { barTop: bar.top, barBottom: bar.bottom, top: r.top, bottom: r.bottom,
           clipped: hint.scrollHeight > hint.clientHeight + 1 || hint.scrollWidth > hint.clientWidth + 1,
           text: hint.innerText };
})()"""


@pytest.mark.parametrize("width,height", [(360, 640), (390, 844), (412, 915)])
def test_the_no_connection_notice_stays_inside_its_bar(
    server: str, browser: Any, screens: Path, width: int, height: int
) -> None:
    page_id, token = page_ready_to_flick(server)
    ctx = browser.new_context(**{**PHONE, "viewport": {"width": width, "height": height}})
    try:
        p = Phone(ctx, server)
        p.goto(f"/p/{page_id}#seat={token}")
        canvas_before = p.page.locator(".stage canvas").bounding_box()
        p.page.route("**/api/pages/*/actions", lambda route: route.abort("internetdisconnected"))
        soldier, direction = aim_at_nearest_enemy(p.state())
        p.drag(flick_path(soldier, direction, 160))
        p.page.wait_for_function(
            "document.querySelector('.bottombar .hint').innerText.includes('No connection')", timeout=10000
        )
        got = p.page.evaluate(FITS)
        assert "will be sent" in got["text"]
        assert got["top"] >= got["barTop"] and got["bottom"] <= got["barBottom"], got
        assert not got["clipped"], got
        # Nothing moved under the finger meanwhile.
        assert p.page.locator(".stage canvas").bounding_box() == canvas_before
        p.shot(screens, f"notice-fits-{width}")
        p.page.unroute("**/api/pages/*/actions")
        p.page.wait_for_function("window.dotfight.state().inkCount === 1", timeout=15000)
        p.idle()
        assert p.page.locator(".bottombar .actions").is_visible()
        assert p.errors == []
    finally:
        ctx.close()
