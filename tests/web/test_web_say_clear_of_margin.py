"""The "Say…" button sits clear of the page's red margin line (DESIGN.md: one red margin line) at every
phone size the web tests use, portrait and landscape, for either seat (red's page is turned half a
turn, so its margin line runs down the right, the button's side): on red's turned page it sat over
the line at 360 × 640 and 390 × 600, and across the line's x below its foot on the taller phones.
That nothing else in the margins moves, nor the page, is test_web_people_fits.py's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_web_people_clock import live_page, open_seat

from tests.support.chromium import PHONE

pytestmark = pytest.mark.browser

SIZES = {
    "360x640": {"width": 360, "height": 640},
    "390x600": {"width": 390, "height": 600},
    "390x844": {"width": 390, "height": 844},
    "412x915": {"width": 412, "height": 915},
    "844x390": {"width": 844, "height": 390},
}
# The margin line as paper.js draws it: at 8.5 % of the page's width, 2.2 page units wide.
MARGIN_AT, MARGIN_WIDTH = 0.085, 2.2

# The button's box, the margin line's x on screen (its two edges, through the app's own page-to-screen
# mapping, so a turned page has it on the right), the other things in the margins and the board.
MEASURE = f"""() => {{
  const s = window.dotfight.state();
  const rules = window.dotfight.screen().state.rules;
  const w = rules.page_width, h = rules.page_height;
  const a = window.dotfight.toPage(w * {MARGIN_AT} - {MARGIN_WIDTH} / 2, 0);
  const b = window.dotfight.toPage(w * {MARGIN_AT} + {MARGIN_WIDTH} / 2, h);
  const box = (el) => {{ const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }};
  return {{
    button: box(document.querySelector('.margin-bottom [data-action=say]')),
    line: [Math.min(a.x, b.x), Math.max(a.x, b.x)],
    others: [...document.querySelectorAll('.margin > :not(.say-btn)')].map((el) => [el.className, box(el)]),
    flip: s.view.flip, zoom: s.view.zoom,
  }};
}}"""


@pytest.mark.parametrize("size", list(SIZES))
def test_the_say_button_sits_clear_of_the_margin_line(
    server: str, browser: Any, screens: Path, size: str
) -> None:
    created = live_page(server)
    for side in ("red", "blue"):
        ctx = browser.new_context(**{**PHONE, "viewport": SIZES[size]})
        try:
            p = open_seat(ctx, server, created, side, None)
            p.page.locator(".margin-bottom [data-action=say]").wait_for()
            p.idle()
            seen = p.page.evaluate(MEASURE)
            assert seen["flip"] is (side == "red") and seen["zoom"] == 1, seen
            left, top, right, bottom = seen["button"]
            line_left, line_right = seen["line"]
            assert right <= line_left or left >= line_right, f"{size} {side}: the button on the line: {seen}"
            # Whole, on screen, and at least the 44 × 44 px a thumb needs.
            width, height = SIZES[size]["width"], SIZES[size]["height"]
            assert 0 <= left < right <= width and 0 <= top < bottom <= height, seen
            assert right - left >= 44 and bottom - top >= 44, seen
            p.shot(screens, f"say-clear-of-margin-{size}-{side}")
            assert p.errors == []
        finally:
            ctx.close()
