"""Defect 7, item by item: no dead-end Send with one base; the end sheet once, not on every return;
Back closes a sheet; the cover does not say "How to play it" beside "How to play"; the exercise book
marks your move; Ready in red's colour on red's turn; a too-short pull is said; blue's own half stays
clean paper while drawing bases. (The bonus flag is in test_web_chain_stop, the bot watcher in
test_web_turns_follow.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from web_helpers import SETUP, Phone, aim_at_nearest_enemy, make_page, page_ready_to_flick

pytestmark = pytest.mark.browser


def test_no_send_with_one_base(server: str, phone: Any, screens: Path) -> None:
    rules = {"bases_per_side": 1, "soldiers_per_base": 8}
    created = make_page(server, {"preset": "custom", "rules": rules, "mode": "local"}, SETUP)
    p = Phone(phone, server)
    p.goto(f"/p/{created['id']}#seat={created['seats']['blue']}")
    assert p.state()["tool"] == "flick"
    assert p.page.locator("[data-action=send]").count() == 0
    p.shot(screens, "defect7-one-base-no-send")


def test_end_sheet_once_and_back_closes_sheets(server: str, phone: Any, screens: Path) -> None:
    created = make_page(server, {"preset": "quick", "mode": "local"}, [*SETUP, ("blue", {"type": "resign"})])
    p = Phone(phone, server)
    p.goto(f"/p/{created['id']}#seat={created['seats']['blue']}")
    # The sheet opens once the page's numbers are counted (a log read): on a loaded machine, after idle.
    p.page.locator(".sheet.end").wait_for()
    p.page.wait_for_timeout(300)
    assert p.page.locator(".sheet.end").count() == 1
    # Back closes the sheet and stays on the page.
    p.page.go_back()
    p.page.wait_for_function("!document.querySelector('.scrim')")
    assert p.state()["screen"] == "page" and f"/p/{created['id']}" in p.page.url
    # Coming back to the finished page: no sheet pops up again (Numbers still opens it).
    p.goto("/")
    p.goto(f"/p/{created['id']}")
    p.page.wait_for_timeout(300)
    assert p.page.locator(".sheet.end").count() == 0
    p.shot(screens, "defect7-end-sheet-once")
    p.tap("text=Numbers")
    p.page.locator(".sheet.end").wait_for()
    # The page menu, too, closes with Back.
    p.page.go_back()
    p.page.wait_for_function("!document.querySelector('.scrim')")
    p.tap("[aria-label='page menu']")
    p.page.locator(".sheet").wait_for()  # the menu's module loads on its first opening
    assert p.page.locator(".sheet").count() == 1
    p.page.go_back()
    p.page.wait_for_function("!document.querySelector('.scrim')")
    assert p.state()["screen"] == "page"
    # A sheet closed by its own button leaves Back to leave the page.
    p.tap("[aria-label='page menu']")
    p.page.locator(".sheet button", has_text="Close").tap()
    p.page.wait_for_timeout(200)
    p.page.go_back()
    p.page.wait_for_function("location.pathname === '/'")
    p.shot(screens, "defect7-back-left-page")


def test_cover_words_book_mark_and_red_ready(server: str, phone: Any, screens: Path) -> None:
    p = Phone(phone, server)
    p.goto("/")
    text = p.page.locator("#app").inner_text()
    assert "How to play it" not in text and "How to play" in text
    p.shot(screens, "defect7-cover-words")
    # A shared-link page where it is blue's move: the book marks it; red's page where it is not: no mark.
    created = make_page(server, {"preset": "quick", "mode": "link"}, SETUP)
    p.goto(f"/p/{created['id']}#seat={created['seats']['blue']}&side=blue")
    p.goto("/#book")
    item = p.page.locator(f".book-item[data-id='{created['id']}']")
    item.locator(".badge", has_text="your move").wait_for()
    p.shot(screens, "defect7-book-your-move")
    other = make_page(server, {"preset": "quick", "mode": "link"}, SETUP)
    p.goto(f"/p/{other['id']}#seat={other['seats']['red']}&side=red")
    p.goto("/#book")
    p.page.wait_for_function("!document.body.innerText.includes('…')")
    assert p.page.locator(f".book-item[data-id='{other['id']}'] .badge").count() == 0
    # Ready is red on red's turn to arrange.
    local = make_page(server, {"preset": "quick", "mode": "local"}, SETUP[:2])
    p.goto(f"/p/{local['id']}#seat={local['seats']['blue']}")
    assert p.state()["sideToAct"] == "red"
    assert "btn-red" in (p.page.locator("[data-action=ready]").get_attribute("class") or "")
    p.shot(screens, "defect7-red-ready")


def test_a_short_pull_is_said(server: str, phone: Any, screens: Path) -> None:
    page_id, token = page_ready_to_flick(server)
    p = Phone(phone, server)
    p.goto(f"/p/{page_id}#seat={token}")
    soldier, (ux, uy) = aim_at_nearest_enemy(p.state())
    sx, sy = p.client(soldier["x"], soldier["y"])
    p.touch("touchStart", sx, sy)
    for k in range(1, 6):
        p.touch("touchMove", sx - ux * 3 * k, sy - uy * 3 * k)  # 15 CSS px: inside the soldier's 22 px
    p.touch("touchEnd")
    toast = p.page.locator(".toast")
    toast.wait_for()
    assert "Pull further" in toast.inner_text()
    assert p.state()["inkCount"] == 0
    p.shot(screens, "defect7-short-pull")


def test_own_half_is_clean_paper_while_drawing_bases(server: str, phone: Any, screens: Path) -> None:
    created = make_page(server, {"preset": "quick", "mode": "local"}, [])
    p = Phone(phone, server)
    p.goto(f"/p/{created['id']}#seat={created['seats']['blue']}")
    p.shot(screens, "defect7-own-half")
    # A point of blue's half between two ruled lines, away from the margin: paper colour, untinted.
    rgb = p.page.evaluate(
        """() => {
          const c = document.querySelector('.stage canvas');
          const at = window.dotfight.toPage(600, 1192);
          const r = c.getBoundingClientRect(), k = c.width / r.width;
          const x = Math.round((at.x - r.left) * k), y = Math.round((at.y - r.top) * k);
          return [...c.getContext('2d').getImageData(x, y, 1, 1).data].slice(0, 3);
        }"""
    )
    assert rgb == pytest.approx([251, 246, 233], abs=3)
