"""A page by a shared link: each side plays at its own pace, the page waits, and the book opens it again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from web_helpers import Phone, aim_at_nearest_enemy, flick_path, log

from tests.support.chromium import PHONE

pytestmark = pytest.mark.browser


def open_from_book(phone: Phone, page_id: str) -> None:
    """Goes to the exercise book and opens the page where it stands."""
    phone.goto("/#book")
    item = phone.page.locator(f".book-item[data-id='{page_id}']")
    item.wait_for()
    item.locator("button", has_text="Open").tap()
    phone.page.wait_for_url(f"**/p/{page_id}*")
    phone.page.wait_for_function("window.dotfight !== undefined")
    phone.idle()


def test_shared_link_page_at_each_sides_own_pace(
    server: str, browser: Any, phone: Any, screens: Path
) -> None:
    blue = Phone(phone, server)
    links = blue.start_page("quick", "link")
    assert "#seat=" in links[0] and links[0].endswith("&side=red")
    blue.page.locator(".sheet button", has_text="Done").tap()
    page_id = blue.state()["id"]
    assert blue.state()["mode"] == "link"

    # Blue sets up and arranges, then leaves the page: nobody else is there, and nothing needs them to be.
    blue.tap("[data-action=quick_setup]")
    blue.idle()
    blue.tap("[data-action=ready]")
    blue.idle()
    blue.goto("/")
    assert [e["action"]["type"] for e in log(server, page_id)["entries"]] == ["quick_setup", "ready"]

    # Later, red opens the link on another phone: the page stands where blue left it; red arranges.
    red_ctx = browser.new_context(**PHONE)
    try:
        red = Phone(red_ctx, server)
        red.open_link(links[0])
        st = red.state()
        assert st["id"] == page_id and st["side"] == "red" and st["phase"] == "positioning"
        assert len(st["bases"]) == 6 and st["tool"] == "arrange"
        red.tap("[data-action=ready]")
        red.idle()
        assert red.state()["phase"] == "play" and red.state()["sideToAct"] == "blue"
        red.goto("/")

        # Blue comes back through the exercise book, finds it is his turn, and flicks.
        open_from_book(blue, page_id)
        st = blue.state()
        assert st["phase"] == "play" and st["sideToAct"] == "blue" and st["tool"] == "flick"
        soldier, direction = aim_at_nearest_enemy(st)
        blue.drag(flick_path(soldier, direction, 160))
        blue.idle()
        entries = log(server, page_id)["entries"]
        assert entries[-1]["side"] == "blue" and entries[-1]["action"]["type"] == "flick"
        ink = entries[-1]["events"][0]
        assert ink["type"] == "ink"
        end_x, end_y = ink["points"][-1]
        mid = ((ink["points"][0][0] + end_x) / 2, (ink["points"][0][1] + end_y) / 2)

        # Red's book opens the page with blue's line on it.
        open_from_book(red, page_id)
        assert red.state()["inkCount"] == 1
        assert red.ink_near(*mid, "blue")
        red.shot(screens, "link-red-later")
        assert blue.errors == [] and red.errors == []
    finally:
        red_ctx.close()
