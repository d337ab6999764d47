"""Issue 19, items 5 and 6 on two phones against the real server (no fakes): the invited (red) seat of a
finished Quick link page taps Rematch, blue's phone hears the offer at once and accepts, and both
phones land on a Quick page of the server's with the colours swapped, each on its own new seat; then a
phrase said on one phone shows on the other. Neither moves the page under the thumb."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_web_people_clock import BOARD
from web_helpers import SETUP, Phone, make_page

from tests.support.chromium import PHONE

pytestmark = pytest.mark.browser

QUICK_LINK = {"preset": "quick", "mode": "link"}


def open_seat(ctx: Any, server: str, page_id: str, token: str, side: str) -> Phone:
    """A phone opening a seat's link (its book has never seen the page)."""
    p = Phone(ctx, server)
    p.goto(f"/p/{page_id}#seat={token}&side={side}")
    return p


def rematch_of(server: str, page_id: str, token: str | None = None) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    answer: dict[str, Any] = httpx.get(
        f"{server}/api/pages/{page_id}/rematch", headers=headers, timeout=10
    ).json()
    return answer


def made_page(server: str, page_id: str) -> str:
    """The rematch's page once the server has made it (bounded wait)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        made = rematch_of(server, page_id)["page"]
        if made:
            return str(made)
        time.sleep(0.05)
    raise AssertionError("the server made no rematch")


def book_token(p: Phone, page_id: str) -> str:
    pages = p.page.evaluate("JSON.parse(localStorage.getItem('dotfight.book.v1'))")
    return str(next(e for e in pages if e["id"] == page_id)["token"])


def test_a_rematch_from_the_invited_seat_and_a_phrase_on_the_real_server(
    server: str, browser: Any, screens: Path
) -> None:
    created = make_page(server, QUICK_LINK, [*SETUP, ("blue", {"type": "resign"})])
    old, seats = created["id"], created["seats"]
    ctx_blue, ctx_red = browser.new_context(**PHONE), browser.new_context(**PHONE)
    try:
        blue = open_seat(ctx_blue, server, old, seats["blue"], "blue")
        red = open_seat(ctx_red, server, old, seats["red"], "red")
        red.page.locator(".sheet.end [data-action=rematch]").wait_for()
        blue.page.locator(".sheet.end").wait_for()
        board_blue = blue.page.evaluate(BOARD)
        red.tap(".sheet.end [data-action=rematch]")
        red.page.locator(".sheet.end [data-action=withdraw-rematch]").wait_for()
        assert rematch_of(server, old) == {"offered_by": "red", "page": None}
        # Blue hears it at once, over the real socket, and the page does not move.
        offer = blue.page.locator(".sheet.rematch-offer")
        offer.wait_for(timeout=5000)
        assert offer.locator("h2").inner_text() == "Red offers a rematch"
        assert blue.page.evaluate(BOARD) == board_blue
        blue.tap(".rematch-offer [data-action=accept-rematch]")
        new = made_page(server, old)
        for p in (blue, red):
            p.page.wait_for_url(f"**/p/{new}", timeout=10000)
            p.idle()
        # A Quick page for both, the colours swapped, each on its own seat of the server's.
        assert (red.state()["id"], red.state()["side"], red.state()["mode"]) == (new, "blue", "link")
        assert (blue.state()["id"], blue.state()["side"], blue.state()["mode"]) == (new, "red", "link")
        red_seat, blue_seat = rematch_of(server, old, seats["red"]), rematch_of(server, old, seats["blue"])
        assert book_token(red, new) == red_seat["seat"] and book_token(blue, new) == blue_seat["seat"]
        assert red_seat["seat"] != blue_seat["seat"]
        snapshot = httpx.get(f"{server}/api/pages/{new}", timeout=10).json()
        assert snapshot["rules"]["preset"] == "quick" and snapshot["mode"] == "link"
        assert snapshot["rules"] == httpx.get(f"{server}/api/pages/{old}", timeout=10).json()["rules"]
        # Both already hold their seats: the phone waiting for the other's move offers no link to share.
        waiting = blue if blue.state()["side"] != snapshot["side_to_act"] else red
        assert waiting.page.locator(".bottombar .actions button", has_text="Share link").count() == 0
        red.shot(screens, "people-offers-rematch-real")

        # A phrase from the phone that now plays blue shows on the other phone, which does not move.
        version = snapshot["version"]
        board_blue = blue.page.evaluate(BOARD)
        red.tap(".margin-bottom [data-action=say]")
        red.page.locator(".say-sheet").wait_for()
        red.tap(".say-sheet .phrases >> text=Good luck!")
        bubble = blue.page.locator(".margin-top .bubble-blue")
        bubble.wait_for(timeout=5000)
        assert bubble.inner_text() == "Good luck!"
        assert blue.page.evaluate(BOARD) == board_blue
        said = httpx.get(f"{server}/api/pages/{new}/said", timeout=10).json()["said"]
        assert [(p["side"], p["phrase"]) for p in said] == [("blue", "good_luck")]
        assert httpx.get(f"{server}/api/pages/{new}", timeout=10).json()["version"] == version
        blue.shot(screens, "people-offers-phrase-real")
        assert red.errors == [] and blue.errors == []
    finally:
        ctx_blue.close()
        ctx_red.close()
