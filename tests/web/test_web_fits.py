"""Issue 21, item 3: nothing a player needs is cut off at 360 × 640. Every status, badge, hint and
notice the page screen can show is drawn in the real bars of a page screen and measured: no text
wider than its box (the one-line texts end in an ellipsis when they are), no badge outside the bar.

The strings are the app's own: the bars' words come from controls.js's `statusView` / `barView` /
`hintLine` over every phase, way to play, seat, preset and turn option combination (badges, chain
credits, flicks left, a send), the notices from sending.js, the toasts from announce.js and the
refusals from words.js's tables — none is copied here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from web_helpers import Phone, page_ready_to_flick

from tests.support.chromium import PHONE

pytestmark = pytest.mark.browser

SMALL_PHONE = {**PHONE, "viewport": {"width": 360, "height": 640}}

MEASURE = (Path(__file__).parent / "fits_measure.js").read_text()


WIDEST = """async () => {
  const { statusView } = await import('/js/controls.js');
  const { statusNodes, presenceNodes } = await import('/js/bars.js');
  const screen = window.dotfight.screen();
  const opts = { ...screen.options(), bonus: true, last_stand: true, flicks_left: 2 };
  const ui = { ...screen.ui, mode: 'link', side: 'blue' };
  screen.el.status.replaceChildren(...statusNodes(statusView(screen.model, opts, ui), false));
  screen.el.presence.replaceChildren(...presenceNodes({ blue: true, red: false }, 'link'));
}"""


def test_nothing_a_player_needs_is_cut_at_360_px(server: str, browser: Any, screens: Path) -> None:
    page_id, token = page_ready_to_flick(server)
    rules = {}
    for preset in ("classic", "quick", "dawood"):
        body = {"preset": preset, "mode": "local"}
        rules[preset] = httpx.post(f"{server}/api/pages", json=body, timeout=10).json()["snapshot"]["rules"]
    # The largest Custom page the cover's steppers make.
    rules["custom"] = {**rules["classic"], "bases_per_side": 8, "soldiers_per_base": 20}
    ctx = browser.new_context(**SMALL_PHONE)
    try:
        p = Phone(ctx, server)
        p.goto(f"/p/{page_id}#seat={token}")
        result = p.page.evaluate(MEASURE, rules)
        assert result["checked"] > 5000
        assert result["bad"] == [], f"{len(result['bad'])} cut, e.g. " + "\n".join(result["bad"][:15])
        p.page.evaluate("import('/js/ui.js').then((ui) => ui.clearToasts())")
        p.page.evaluate("window.dotfight.screen().refresh()")
        p.shot(screens, "fits-360")
        # The fullest top bar: a shared link's seat, who is here, a bonus flick in a last stand.
        p.page.evaluate(WIDEST)
        assert "bonus flick" in p.page.locator(".topbar").inner_text()
        assert "last stand" in p.page.locator(".topbar").inner_text()
        p.shot(screens, "fits-360-badges")
        assert p.errors == []
    finally:
        ctx.close()


def test_a_page_that_cannot_be_opened_says_why_in_full(server: str, browser: Any, screens: Path) -> None:
    ctx = browser.new_context(**SMALL_PHONE)
    try:
        p = Phone(ctx, server)
        p.page.route(
            "**/api/pages/gone1*",
            lambda route: route.fulfill(
                status=410, content_type="application/json",
                body='{"error": {"code": "page_expired", "message": "expired"}}',
            ),
        )  # fmt: skip
        p.goto("/p/gone1")
        texts = p.page.evaluate(
            """[...document.querySelectorAll('.topbar .who, .topbar .detail, .bottombar .hint, .cannot-open')]
               .filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.textContent)"""
        )
        assert texts == []
        assert "Start a new page" in p.page.locator(".game").inner_text()
        p.shot(screens, "fits-360-expired")
    finally:
        ctx.close()
