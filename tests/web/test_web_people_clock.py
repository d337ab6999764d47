"""Issue 19, item 8 on the phone: the clocks of a live page and the deadline of a link page.

The server's clocks are faked on the wire (people_fakes.py) with the fake server's time an hour
ahead of the phone's own, so a phone counting from its own clock instead of the server's `now` shows
an hour too much: the clocks must agree with the server's deadline within 0.5 s. The page never moves
for them: the board's box is the one the same page has without a clock.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
from people_fakes import FakeServer, iso
from web_helpers import SETUP, Phone, make_page

from tests.support.chromium import PHONE

pytestmark = pytest.mark.browser

SKEW_S = 3600.0
# Installed before the app: the phone's buzzes are recorded, not felt.
RECORD_BUZZ = "window.__buzz = []; navigator.vibrate = (p) => { window.__buzz.push(p); return true; };"
BOARD = (
    "(() => { const r = document.querySelector('.stage canvas').getBoundingClientRect();"
    " return [r.x, r.y, r.width, r.height]; })()"
)


def live_page(server: str) -> dict[str, Any]:
    """A live Quick page set up: blue's first turn of play."""
    return make_page(server, {"preset": "quick", "mode": "live"}, list(SETUP))


def open_seat(ctx: Any, server: str, created: dict[str, Any], side: str, fake: FakeServer | None) -> Phone:
    p = Phone(ctx, server)
    if fake:
        fake.attach(p.page)
    p.goto(f"/p/{created['id']}#seat={created['seats'][side]}&side={side}")
    return p


def clocks(p: Phone) -> tuple[dict[str, Any], float]:
    """The app's clocks and the machine's time at the moment they were read (the read's midpoint)."""
    before = time.time()
    st = p.state()["people"]["clocks"]
    return st, (before + time.time()) / 2


def test_live_clocks_count_down_with_the_servers_time(server: str, browser: Any, screens: Path) -> None:
    created = live_page(server)
    # The board without a clock, for the same page at the same size.
    plain_ctx = browser.new_context(**PHONE)
    try:
        plain = open_seat(plain_ctx, server, created, "blue", None)
        board_plain = plain.page.evaluate(BOARD)
    finally:
        plain_ctx.close()
    fake = FakeServer(server, skew_s=SKEW_S)
    start = fake.now()
    blue_deadline = start + 200.25
    fake.clock = lambda now: {
        "initial_s": 300, "increment_s": 3, "blue_s": 300, "red_s": 245.5,
        "running": "blue", "deadline": iso(blue_deadline),
    }  # fmt: skip
    ctx, ctx_red = browser.new_context(**PHONE), browser.new_context(**PHONE)
    try:
        ctx.add_init_script(RECORD_BUZZ)
        p = open_seat(ctx, server, created, "blue", fake)
        red = open_seat(ctx_red, server, created, "red", fake)
        for phone in (p, red):
            phone.page.locator(".clock-blue").wait_for()
        for _ in range(2):
            # Both phones: the server's deadline less the server's time now (the phone's time + the skew).
            for phone in (p, red):
                st, at = clocks(phone)
                expected_blue = (blue_deadline - (at + SKEW_S)) * 1000
                assert st["running"] == "blue"
                assert abs(st["blue_ms"] - expected_blue) < 500, (st, expected_blue)
                assert abs(st["red_ms"] - 245500) < 1
            p.page.wait_for_timeout(1200)
        # Red holds the other phone: blue's clock is across its page, its own below.
        assert red.page.locator(".margin-top .clock-blue.running").count() == 1
        assert red.page.locator(".margin-bottom .clock-red").inner_text() == "4:06"
        # Both written in minutes and seconds, each in its margin: blue's (the player's) below the page.
        blue_face, red_face = (
            p.page.locator(".margin-bottom .clock-blue"),
            p.page.locator(".margin-top .clock-red"),
        )
        assert re.fullmatch(r"3:[01]\d", blue_face.inner_text()), blue_face.inner_text()
        assert red_face.inner_text() == "4:06"
        assert "running" in (blue_face.get_attribute("class") or "") and "urgent" not in (
            blue_face.get_attribute("class") or ""
        )
        assert p.page.evaluate(BOARD) == board_plain
        # Reachable by keyboard: Tab from the page reaches the clocks.
        labels = []
        p.page.locator(".stage canvas").focus()
        for _ in range(6):
            p.page.keyboard.press("Tab")
            labels.append(p.page.evaluate("document.activeElement.getAttribute('aria-label') || ''"))
        assert any(label.startswith("Blue's clock:") for label in labels), labels
        p.shot(screens, "people-clock-live")

        # Eleven and a half seconds left: the next events message brings the new clock.
        urgent_deadline = fake.now() + 11.5
        fake.clock = lambda now: {
            "initial_s": 300, "increment_s": 3, "blue_s": 300, "red_s": 245.5,
            "running": "blue", "deadline": iso(urgent_deadline),
        }  # fmt: skip
        fake.push(
            {"type": "events", "version": p.state()["version"], "events": [], "clock": fake.clock_now()}
        )
        p.page.wait_for_function("document.querySelector('.clock-blue').textContent === '0:11'")
        assert "urgent" not in (blue_face.get_attribute("class") or "")
        p.page.locator(".clock-blue.urgent").wait_for(timeout=4000)
        st, at = clocks(p)
        assert abs(st["blue_ms"] - (urgent_deadline - (at + SKEW_S)) * 1000) < 500
        assert st["blue_ms"] < 10000
        # Said once, buzzed once (the turn's own buzz is another pattern), not every second.
        p.page.wait_for_timeout(2500)
        buzz = p.page.evaluate("window.__buzz")
        assert buzz.count(120) == 1, buzz
        said = p.page.locator("#said").inner_text()
        assert "Ten seconds left on your clock." in said
        assert p.page.evaluate(BOARD) == board_plain
        p.shot(screens, "people-clock-urgent")
        assert p.errors == [] and red.errors == []
    finally:
        ctx.close()
        ctx_red.close()


def test_a_link_page_says_the_days_left(server: str, browser: Any, screens: Path) -> None:
    created = make_page(server, {"preset": "quick", "mode": "link"}, list(SETUP))
    fake = FakeServer(server, skew_s=-SKEW_S)
    deadline = fake.now() + 2 * 86400 + 3 * 3600
    fake.clock = lambda now: {
        "per_move_s": 259200,
        "blue_s": 259200,
        "red_s": 259200,
        "running": "blue",
        "deadline": iso(deadline),
    }
    ctx = browser.new_context(**PHONE)
    try:
        p = open_seat(ctx, server, created, "red", fake)
        # Red holds the phone: blue's time for its move is across the page, and red's own is not shown.
        face = p.page.locator(".margin-top .clock-blue")
        face.wait_for()
        assert face.inner_text() == "2 days left"
        assert p.page.locator(".clock-red:visible").count() == 0
        st, at = clocks(p)
        assert st["perMove"] and abs(st["blue_ms"] - (deadline - (at - SKEW_S)) * 1000) < 500
        p.shot(screens, "people-clock-link")
        assert p.errors == []
    finally:
        ctx.close()


def test_before_play_the_running_side_counts_its_setup_time(server: str, browser: Any) -> None:
    created = make_page(server, {"preset": "quick", "mode": "live"}, [])  # blue draws the first base
    fake = FakeServer(server, skew_s=SKEW_S)
    deadline = fake.now() + 25.4
    fake.clock = lambda now: {
        "initial_s": 300, "increment_s": 3, "blue_s": 300, "red_s": 300,
        "running": "blue", "deadline": iso(deadline),
    }  # fmt: skip
    ctx = browser.new_context(**PHONE)
    try:
        p = open_seat(ctx, server, created, "blue", fake)
        face = p.page.locator(".margin-bottom .clock-blue.running")
        face.wait_for()
        st, at = clocks(p)
        assert abs(st["blue_ms"] - (deadline - (at + SKEW_S)) * 1000) < 500
        assert re.fullmatch(r"0:2\d to set up", face.inner_text()), face.inner_text()
        # The other side's clock stands at its whole time until play starts.
        assert p.page.locator(".margin-top .clock-red").inner_text() == "5:00"
        assert p.errors == []
    finally:
        ctx.close()
