"""Issue 19, item 8: what the page's margins show — both clocks (one urgent), the absence countdown
and the claim, a phrase bubble on either side, the phrase button — is whole on a 360 × 640 phone and
a 412 × 915 one: nothing cut off, nothing off screen, nothing over anything else in its margin, and
the board exactly where the same page has it without any of them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from people_fakes import FakeServer, iso
from test_web_layout_shift import CLS_BUDGET, SHIFT_OBSERVER, SLOW_NETWORK
from test_web_people_clock import BOARD, live_page, open_seat
from web_helpers import Phone

from tests.support.chromium import PHONE

pytestmark = pytest.mark.browser

SIZES = {"360x640": {"width": 360, "height": 640}, "412x915": {"width": 412, "height": 915}}

# Every visible thing in the margins: cut (its text wider than its box), off screen, or over another.
MEASURE = """() => {
  const bad = [];
  const W = innerWidth, H = innerHeight;
  for (const margin of document.querySelectorAll('.margin')) {
    const items = [...margin.children].filter((el) => el.offsetParent !== null);
    const boxes = items.map((el) => [el, el.getBoundingClientRect()]);
    for (const [el, r] of boxes) {
      const name = `${margin.className} .${el.className}: "${el.textContent}"`;
      if (r.left < 0 || r.top < 0 || r.right > W + 0.5 || r.bottom > H + 0.5) bad.push(`off screen ${name}`);
      for (const part of [el, ...el.querySelectorAll('*')]) {
        if (part.scrollWidth > part.clientWidth + 1) bad.push(`cut ${name}`);
      }
    }
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
      const [a, b] = [boxes[i][1], boxes[j][1]];
      const apart = a.right - 0.5 <= b.left || b.right - 0.5 <= a.left
        || a.bottom - 0.5 <= b.top || b.bottom - 0.5 <= a.top;
      if (!apart) {
        bad.push(`over each other in ${margin.className}: ${items[i].className} / ${items[j].className}`);
      }
    }
  }
  const shown = [...document.querySelectorAll('.margin > *')].filter((el) => el.offsetParent !== null);
  return { bad, seen: shown.map((el) => el.className) };
}"""


@pytest.mark.parametrize("size", list(SIZES))
def test_the_margins_fit_and_never_move_the_page(server: str, browser: Any, screens: Path, size: str) -> None:
    created = live_page(server)
    phone = {**PHONE, "viewport": SIZES[size]}
    plain_ctx = browser.new_context(**phone)
    try:
        board_plain = open_seat(plain_ctx, server, created, "red", None).page.evaluate(BOARD)
    finally:
        plain_ctx.close()
    fake = FakeServer(server)
    fake.seat_sides = {created["seats"]["blue"]: "blue", created["seats"]["red"]: "red"}
    deadline = fake.now() + 9.5
    fake.clock = lambda now: {
        "initial_s": 600, "increment_s": 5, "blue_s": 600, "red_s": 599.4,
        "running": "blue", "deadline": iso(deadline),
    }  # fmt: skip
    fake.claim_at = fake.now() + 59
    ctx = browser.new_context(**phone)
    try:
        p = open_seat(ctx, server, created, "red", fake)
        p.page.locator(".margin-top .away").wait_for()
        p.page.locator(".margin-top .clock-blue.urgent").wait_for()
        # Red says something (its own margin, beside the phrase button).
        p.tap(".margin-bottom [data-action=say]")
        p.tap(".say-sheet .phrases >> text=Well played!")
        p.page.locator(".margin-bottom .bubble").wait_for()
        result = p.page.evaluate(MEASURE)
        assert result["bad"] == [], result
        everything = {
            "clock clock-blue running urgent", "away", "clock clock-red", "bubble bubble-red", "btn say-btn",
        }  # fmt: skip
        assert everything <= set(result["seen"]), result["seen"]
        assert p.page.evaluate(BOARD) == board_plain
        p.shot(screens, f"people-fits-{size}-countdown")
        # The claim open, and a phrase from across the page.
        fake.claim_at = fake.now() - 1
        fake.presence(blue=False, red=True)
        p.page.locator(".sheet.claim-sheet").wait_for()
        p.tap(".claim-sheet [data-action=keep-waiting]")
        p.page.locator(".margin-top [data-action=claim]").wait_for()
        result = p.page.evaluate(MEASURE)
        assert result["bad"] == [], result
        assert "away" in result["seen"]
        fake.push({"type": "said", "side": "blue", "phrase": "well_played", "at": iso(fake.now())})
        p.page.locator(".margin-top .bubble-blue").wait_for()
        result = p.page.evaluate(MEASURE)
        assert result["bad"] == [], result
        # The phrase from the side that was away takes the claim's place while it shows.
        assert "away" not in result["seen"] and "bubble bubble-blue" in result["seen"]
        assert p.page.evaluate(BOARD) == board_plain
        p.shot(screens, f"people-fits-{size}-claim")
        p.page.locator(".margin-top .bubble-blue").wait_for(state="detached", timeout=6000)
        p.page.locator(".margin-top [data-action=claim]").wait_for()
        assert p.errors == []
    finally:
        ctx.close()


@pytest.mark.parametrize("size", list(SIZES))
def test_a_live_page_with_clocks_does_not_jump_while_it_loads(server: str, browser: Any, size: str) -> None:
    """On a slow phone network (as Lighthouse's), the clocks, the phrase button and their styles
    arriving after the first paint shift nothing (issue 10's budget for the page screen)."""
    created = live_page(server)
    fake = FakeServer(server)
    fake.clock = lambda now: {
        "initial_s": 300, "increment_s": 3, "blue_s": 300, "red_s": 300,
        "running": "blue", "deadline": iso(now + 280),
    }  # fmt: skip
    ctx = browser.new_context(**{**PHONE, "viewport": SIZES[size]})
    try:
        ctx.add_init_script(SHIFT_OBSERVER)
        p = Phone(ctx, server)
        fake.attach(p.page)
        p.cdp.send("Network.enable")
        p.cdp.send("Network.emulateNetworkConditions", SLOW_NETWORK)
        p.goto(f"/p/{created['id']}#seat={created['seats']['red']}&side=red")
        p.page.locator(".margin-top .clock-blue").wait_for()
        p.page.locator(".margin-bottom [data-action=say]").wait_for()
        p.page.wait_for_timeout(1500)
        shifts = p.page.evaluate("window.__shifts")
        cls = sum(s["value"] for s in shifts)
        assert cls <= CLS_BUDGET, f"{size}: cumulative layout shift {cls:.3f} > {CLS_BUDGET}: {shifts}"
        assert p.errors == []
    finally:
        ctx.close()
