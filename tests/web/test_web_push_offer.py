"""Issue 21, item 12: "Tell me when it's my move" is offered right after a link is shared (once a
page, dismissible), not only inside the ⋯ menu."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from web_helpers import Phone

pytestmark = pytest.mark.browser

# The permission prompt answered "granted"'s opposite without a person: the toggle then says so.
STUBS = """
window.__asked = 0;
Notification.requestPermission = async () => { window.__asked += 1; return 'denied'; };
navigator.clipboard.writeText = async () => {};
"""


def test_push_is_offered_once_right_after_sharing(server: str, phone: Any, screens: Path) -> None:
    phone.add_init_script(STUBS)
    p = Phone(phone, server)
    p.start_page("quick", "link")
    sheet = p.page.locator(".sheet")
    assert "Share this page" in sheet.first.inner_text()
    # Not before a link has been shared: the share sheet alone offers nothing.
    assert p.page.locator("[data-action=push]").count() == 0
    p.page.locator(".sheet button", has_text="Copy").first.tap()
    p.page.locator(".sheet button", has_text="Done").tap()
    offer = p.page.locator(".push-offer-sheet")
    offer.wait_for()
    toggle = offer.locator("[data-action=push]")
    assert toggle.inner_text() == "Tell me when it's my move"
    assert p.page.evaluate("document.activeElement.dataset.action") == "push"
    p.shot(screens, "push-offer-after-sharing")
    toggle.tap()
    p.page.wait_for_function("window.__asked === 1")
    assert toggle.get_attribute("aria-checked") == "false"
    offer.locator("[data-action=push-not-now]").tap()
    assert p.page.locator(".push-offer-sheet").count() == 0
    # Once: sharing again from the page menu does not offer it again; the menu keeps the toggle.
    p.page.wait_for_timeout(100)
    p.tap("[aria-label='page menu']")
    p.page.locator(".sheet [data-action=push]").wait_for()  # the menu's module loads on its first opening
    assert p.page.locator(".sheet [data-action=push]").count() == 1
    p.page.locator(".sheet button", has_text="Share links").tap()
    p.page.locator(".sheet button", has_text="Copy").first.tap()
    p.page.locator(".sheet button", has_text="Done").tap()
    p.page.wait_for_timeout(200)
    assert p.page.locator(".push-offer-sheet").count() == 0
    assert p.errors == []
