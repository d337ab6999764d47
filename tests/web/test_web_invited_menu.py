"""Issue 21, item 9: the invited player's page menu names the page's size ("Quick · shared link"),
as the book of the player who made it does; it read "A page · shared link"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from web_helpers import Phone, make_page

pytestmark = pytest.mark.browser


def test_the_invited_players_menu_names_the_size(server: str, phone: Any, screens: Path) -> None:
    created = make_page(server, {"preset": "quick", "mode": "link"}, [])
    p = Phone(phone, server)
    # Opened from the link the maker sent: this phone's book has never seen the page.
    p.open_link(f"{created['links']['red']}&side=red")
    p.tap("[aria-label='page menu']")
    what = p.page.locator(".sheet p").first.inner_text()
    assert what == "Quick · shared link"
    p.shot(screens, "invited-menu-size")
    # Kept in the book, so the exercise book names it too.
    kept = p.page.evaluate("(id) => import('/js/book.js').then((b) => b.entry(id).preset)", created["id"])
    assert kept == "quick"
    assert p.errors == []
