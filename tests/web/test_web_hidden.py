"""Issue 21, item 1: anything hidden stays hidden, on every screen, and what is shown is what is made.
The Custom steppers showed with Classic chosen (`.stack {display: grid}` beat the `hidden` attribute)
and pressing + on them changed nothing the page was made with."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from web_helpers import Phone, page_ready_to_flick

pytestmark = pytest.mark.browser

# Every element with the `hidden` attribute that still takes room on screen (its own or a child's).
SHOWN_HIDDEN = """[...document.querySelectorAll('[hidden]')]
  .filter((e) => e.getClientRects().length > 0 || getComputedStyle(e).display !== 'none')
  .map((e) => e.outerHTML.slice(0, 80))"""


def shown_hidden(p: Phone) -> list[str]:
    found: list[str] = p.page.evaluate(SHOWN_HIDDEN)
    return found


def test_hidden_stays_hidden_and_the_sizes_shown_are_made(server: str, phone: Any, screens: Path) -> None:
    p = Phone(phone, server)
    p.goto("/")
    assert p.page.locator("[hidden]").count() >= 3  # the sizes, the steppers, the bot's strength
    assert shown_hidden(p) == []
    p.tap("[data-action=more-sizes]")
    # Classic chosen: the sizes show, the Custom steppers do not.
    assert p.page.locator(".choice[data-value=classic]").get_attribute("aria-checked") == "true"
    assert shown_hidden(p) == []
    assert not p.page.locator(".stepper").first.is_visible()
    p.shot(screens, "hidden-classic-more-sizes")
    for mode in ("bot", "link", "live", "local"):
        p.tap(f".choice[data-value={mode}]")
        assert shown_hidden(p) == [], mode
    # Custom shows its steppers, and the page made has the bases and soldiers they show.
    p.tap(".choice[data-value=custom]")
    assert p.page.locator(".stepper").first.is_visible()
    for _ in range(3):
        p.tap("[aria-label='more bases']")
    p.tap("[aria-label='fewer soldiers']")
    shown = p.page.locator(".stepper output").all_inner_texts()
    assert shown == ["7", "7"]
    p.shot(screens, "hidden-custom-steppers")
    # Back to Quick: the steppers hide again, and the page made is a Quick one.
    p.tap(".choice[data-value=quick]")
    assert shown_hidden(p) == [] and not p.page.locator(".stepper").first.is_visible()
    p.tap(".choice[data-value=custom]")
    p.tap("[data-action=start]")
    p.page.wait_for_url("**/p/*")
    p.idle()
    rules = httpx.get(f"{server}/api/pages/{p.state()['id']}", timeout=10).json()["rules"]
    assert (rules["bases_per_side"], rules["soldiers_per_base"]) == (7, 7)
    # The page screen, the exercise book and how to play hide what they hide too.
    assert p.page.locator(".zoom-reset[hidden]").count() == 1
    assert shown_hidden(p) == []
    page_id, token = page_ready_to_flick(server)
    p.goto(f"/p/{page_id}#seat={token}")
    assert shown_hidden(p) == []
    for path in ("/#book", "/#how", f"/p/{page_id}#view=replay"):
        p.goto(path)
        assert shown_hidden(p) == [], path
    assert p.errors == []
