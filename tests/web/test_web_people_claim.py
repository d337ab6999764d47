"""Issue 19, item 8 on the phone: a live page whose side to act has gone, seen by the one who stayed.

The server's `claim_at` (in presence) and its answer to `claim` are faked on the wire
(people_fakes.py); the page, its socket and the end are the real server's (the fake's claim resigns
blue for real, and names the end `abandoned` as the server will).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from people_fakes import FakeServer, iso
from test_web_people_clock import BOARD, live_page, open_seat

from tests.support.chromium import PHONE

pytestmark = pytest.mark.browser

SKEW_S = -900.0
GRACE_S = 8.0


def blue_resigns(server: str, created: dict[str, Any]) -> int:
    """What the server's claim does, played for real: blue's page ends (the fake names it abandoned)."""
    version = httpx.get(f"{server}/api/pages/{created['id']}", timeout=10).json()["version"]
    res = httpx.post(
        f"{server}/api/pages/{created['id']}/actions",
        json={"action": {"type": "resign"}, "version": version},
        headers={"Authorization": f"Bearer {created['seats']['blue']}"},
        timeout=10,
    )
    assert res.status_code == 200, res.text
    return int(res.json()["version"])


def away_fake(server: str) -> FakeServer:
    fake = FakeServer(server, skew_s=SKEW_S)
    # A clock, so the phone knows the server's time (its own is a quarter of an hour off).
    fake.clock = lambda now: {
        "initial_s": 300, "increment_s": 3, "blue_s": 300, "red_s": 300,
        "running": "blue", "deadline": iso(now + 250),
    }  # fmt: skip
    fake.claim_at = fake.now() + GRACE_S
    return fake


def test_the_claim_appears_at_claim_at_and_ends_the_page(server: str, browser: Any, screens: Path) -> None:
    created = live_page(server)
    fake = away_fake(server)
    claim_at_here = fake.claim_at - SKEW_S  # claim_at on this machine's clock
    fake.end_reason = "abandoned"
    fake.on_claim = lambda msg: blue_resigns(server, created)
    ctx = browser.new_context(**PHONE)
    try:
        # Red stays; blue, whose move it is, has no socket on the page.
        p = open_seat(ctx, server, created, "red", fake)
        board = p.page.evaluate(BOARD)
        countdown = p.page.locator(".margin-top .away")
        countdown.wait_for()
        assert countdown.inner_text().startswith("Blue left the page — claim in 0:0")
        p.shot(screens, "people-claim-countdown")
        assert p.page.locator(".claim-sheet").count() == 0
        p.page.locator(".sheet.claim-sheet").wait_for(timeout=(GRACE_S + 3) * 1000)
        seen_at = time.time()
        assert claim_at_here - 0.3 <= seen_at <= claim_at_here + 1.0, (seen_at, claim_at_here)
        assert p.page.locator(".claim-sheet h2").inner_text() == "Blue left the page"
        assert p.page.evaluate(BOARD) == board
        p.shot(screens, "people-claim-sheet")
        # Keep waiting: the sheet goes, the claim stays in blue's margin.
        p.tap(".claim-sheet [data-action=keep-waiting]")
        assert p.page.locator(".claim-sheet").count() == 0
        p.tap(".margin-top [data-action=claim]")
        p.page.locator(".sheet.end h2", has_text="Red wins!").wait_for(timeout=10000)
        p.idle()
        claims = [m for m in fake.from_apps if m.get("type") == "action" and m["action"] == {"type": "claim"}]
        assert len(claims) == 1 and claims[0]["move_id"]
        assert p.page.locator(".sheet.end").inner_text().count("Blue left the page.") == 1
        assert p.page.locator(".status .detail").inner_text() == "blue left the page"
        assert p.page.locator(".margin .away").count() == 0
        assert p.page.evaluate(BOARD) == board
        p.shot(screens, "people-claim-won")
        assert p.errors == []
    finally:
        ctx.close()


def test_a_refused_claim_and_a_return_alarm_nobody(server: str, browser: Any) -> None:
    created = live_page(server)
    fake = away_fake(server)
    fake.on_claim = lambda msg: None  # blue came back just then: refused
    ctx = browser.new_context(**PHONE)
    try:
        p = open_seat(ctx, server, created, "red", fake)
        p.page.locator(".sheet.claim-sheet").wait_for(timeout=(GRACE_S + 3) * 1000)
        p.tap(".claim-sheet [data-action=claim]")
        toast = p.page.locator("#toasts .toast")
        toast.wait_for()
        assert toast.inner_text() == "Blue is back — the page goes on."
        assert "toast-refusal" not in (toast.get_attribute("class") or "")
        assert p.state()["phase"] == "play"
        # Blue is back: the server's presence names no claim any more; the claim goes.
        fake.claim_at = None
        fake.presence(blue=True, red=True)
        p.page.locator(".margin .away").wait_for(state="detached")
        assert p.page.locator(".claim-sheet").count() == 0
        assert p.errors == []
    finally:
        ctx.close()
