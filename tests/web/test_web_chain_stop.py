"""Defect 4: Stop on a pending lunge chain says "Chain stopped"; the hand-over card comes a moment after
the result, with no toast left floating over it. Defect 7: a bonus flick is flagged in the top bar."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from scenarios import seeded_page_with
from web_helpers import Phone

pytestmark = pytest.mark.browser

# When the toast of the stop appears, and when the hand-over card appears (with the toasts then).
WATCH = """() => {
  window.__seen = { toastAt: null, toastText: null, cardAt: null, toastsAtCard: null };
  new MutationObserver(() => {
    const t = document.querySelector('#toasts .toast');
    if (t && window.__seen.toastAt === null) {
      window.__seen.toastAt = performance.now();
      window.__seen.toastText = t.innerText;
    }
    if (document.querySelector('.handover') && window.__seen.cardAt === null) {
      window.__seen.cardAt = performance.now();
      window.__seen.toastsAtCard = document.querySelector('#toasts').innerText;
    }
  }).observe(document.body, { childList: true, subtree: true });
}"""


def test_stop_says_chain_stopped_and_the_card_waits(server: str, phone: Any, screens: Path) -> None:
    page_id, token = seeded_page_with(server, "lunge_again")
    p = Phone(phone, server)
    p.goto(f"/p/{page_id}#seat={token}")
    st = p.state()
    assert st["sideToAct"] == "blue" and st["turn"]["chain"]
    assert "lunge again" in p.page.locator(".topbar").inner_text()
    assert p.page.locator("[data-action=stop]").inner_text().strip() == "Stop"
    p.page.evaluate(WATCH)
    p.tap("[data-action=stop]")
    p.page.wait_for_function("window.__seen.cardAt !== null", timeout=10000)
    seen = p.page.evaluate("window.__seen")
    assert seen["toastText"] == "Chain stopped."
    assert "(0)" not in seen["toastText"]
    # A moment to look at the page before the card covers it, and no toast over the card.
    assert seen["cardAt"] - seen["toastAt"] >= 800
    assert seen["toastsAtCard"] == ""
    p.shot(screens, "defect4-handover-clean")
    assert "Red's turn" in p.page.locator(".handover").inner_text()
    assert "Chain stopped." in p.page.locator("#said").inner_text()


def test_a_bonus_flick_is_flagged(server: str, phone: Any, screens: Path) -> None:
    page_id, token = seeded_page_with(server, "two_with_one_bullet")
    p = Phone(phone, server)
    p.goto(f"/p/{page_id}#seat={token}")
    st = p.state()
    assert st["sideToAct"] == "blue"
    assert "bonus flick" in p.page.locator(".topbar").inner_text()
    p.shot(screens, "defect7-bonus-flagged")
