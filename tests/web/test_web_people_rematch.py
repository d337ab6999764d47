"""Issue 19, item 8 on the phone: a rematch from either seat, the server's (`/rematch`), never made
on the phone. The old bug: from the invited seat of a Quick link page, Rematch made a Classic page
client-side (the page was not in that phone's book), seated as blue of a page the other never heard of.

`/rematch` and the socket's `rematch` message are faked (people_fakes.py), the new page made for
real, its colours swapped, as the server will; the pages, their sockets and seats are the real server's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from people_fakes import FakeServer, new_rematch_page
from test_web_people_clock import BOARD, open_seat
from web_helpers import SETUP, Phone, make_page

from tests.support.chromium import PHONE

pytestmark = pytest.mark.browser

QUICK_LINK = {"preset": "quick", "mode": "link"}


def finished_link_page(server: str) -> tuple[dict[str, Any], FakeServer]:
    """A Quick link page red won (blue resigned), and the fake rematch that knows its seats."""
    created = make_page(server, QUICK_LINK, [*SETUP, ("blue", {"type": "resign"})])
    fake = FakeServer(server)
    fake.seat_sides = {created["seats"]["blue"]: "blue", created["seats"]["red"]: "red"}
    fake.make_rematch = lambda token: new_rematch_page(fake, server, QUICK_LINK, created["seats"])
    return created, fake


def made_page(p: Phone, fake: FakeServer) -> str:
    """The rematch's page once the fake server has made it (its handlers run while the test waits)."""
    for _ in range(100):
        if fake.rematch["page"]:
            return str(fake.rematch["page"])
        p.page.wait_for_timeout(50)
    raise AssertionError("no rematch was made")


def book_entry(p: Phone, page_id: str) -> dict[str, Any]:
    pages = json.loads(p.page.evaluate("localStorage.getItem('dotfight.book.v1')"))
    return next(e for e in pages if e["id"] == page_id)


def test_a_rematch_offered_from_the_invited_seat_takes_both_to_their_own_new_seats(
    server: str, browser: Any, screens: Path
) -> None:
    created, fake = finished_link_page(server)
    old = created["id"]
    ctx_blue, ctx_red = browser.new_context(**PHONE), browser.new_context(**PHONE)
    try:
        blue = open_seat(ctx_blue, server, created, "blue", fake)
        # The invited player opens the link on a phone whose book has never seen the page.
        red = open_seat(ctx_red, server, created, "red", fake)
        red.page.locator(".sheet.end [data-action=rematch]").wait_for()
        board_blue = blue.page.evaluate(BOARD)
        red.tap(".sheet.end [data-action=rematch]")
        offered = red.page.locator(".sheet.end [data-action=withdraw-rematch]")
        offered.wait_for()
        assert offered.inner_text() == "Offered… (withdraw)"
        assert fake.posted(f"/api/pages/{old}/rematch") == [None]
        # Blue hears it at once (the socket), in a sheet like the end sheet, and the page does not move.
        offer = blue.page.locator(".sheet.rematch-offer")
        offer.wait_for(timeout=5000)
        assert offer.locator("h2").inner_text() == "Red offers a rematch"
        assert blue.page.evaluate(BOARD) == board_blue
        blue.shot(screens, "people-rematch-offer")
        red.shot(screens, "people-rematch-offered")
        blue.tap(".rematch-offer [data-action=accept-rematch]")
        new = made_page(blue, fake)
        assert new and new != old
        for p in (blue, red):
            p.page.wait_for_url(f"**/p/{new}", timeout=10000)
            p.idle()
        # Each on its own new seat, the colours swapped; the same size and way of playing.
        assert (red.state()["id"], red.state()["side"], red.state()["mode"]) == (new, "blue", "link")
        assert (blue.state()["id"], blue.state()["side"], blue.state()["mode"]) == (new, "red", "link")
        assert book_entry(red, new)["token"] == fake.new_seats[created["seats"]["red"]]["seat"]
        assert book_entry(blue, new)["token"] == fake.new_seats[created["seats"]["blue"]]["seat"]
        assert book_entry(red, new)["preset"] == "quick"
        snap = httpx.get(f"{server}/api/pages/{new}", timeout=10).json()
        assert snap["rules"]["preset"] == "quick" and snap["mode"] == "link"
        # Nothing was made on a phone: no page was asked for but through /rematch, and no share sheet
        # opens on the new page (both players are already there).
        assert fake.posted("/api/pages") == []
        assert red.page.locator(".sheet").count() == 0 and blue.page.locator(".sheet").count() == 0
        assert red.errors == [] and blue.errors == []
        red.shot(screens, "people-rematch-new-seat")
    finally:
        ctx_blue.close()
        ctx_red.close()


def test_watchers_are_never_offered_a_rematch_and_an_offer_may_be_declined(server: str, browser: Any) -> None:
    created, fake = finished_link_page(server)
    ctx_watch, ctx_blue, ctx_red = (browser.new_context(**PHONE) for _ in range(3))
    try:
        watcher = Phone(ctx_watch, server)
        fake.attach(watcher.page)
        watcher.goto(f"/p/{created['id']}")
        watcher.page.locator(".sheet.end").wait_for()
        rematch_words = "[data-action$=rematch]"
        assert watcher.page.locator(f".sheet.end {rematch_words}:visible").count() == 0
        watcher.tap(".sheet.end >> text=Look at the page")
        assert watcher.page.locator(f".actions {rematch_words}").count() == 0
        blue = open_seat(ctx_blue, server, created, "blue", fake)
        red = open_seat(ctx_red, server, created, "red", fake)
        # Blue offers from the bar; red declines; blue may offer again.
        blue.tap(".sheet.end >> text=Look at the page")
        blue.tap(".actions [data-action=rematch]")
        blue.page.locator(".actions [data-action=withdraw-rematch]").wait_for()
        red.page.locator(".sheet.rematch-offer").wait_for(timeout=5000)
        assert watcher.page.locator(".sheet.rematch-offer").count() == 0
        red.tap(".rematch-offer [data-action=decline-rematch]")
        blue.page.locator(".actions [data-action=rematch]", has_text="Rematch").wait_for(timeout=5000)
        assert fake.posted(f"/api/pages/{created['id']}/rematch", "DELETE") == [None]
        # Offered again and withdrawn: the offer sheet goes from red's phone.
        blue.tap(".actions [data-action=rematch]")
        red.page.locator(".sheet.rematch-offer").wait_for(timeout=5000)
        blue.tap(".actions [data-action=withdraw-rematch]")
        red.page.locator(".sheet.rematch-offer").wait_for(state="detached", timeout=5000)
        # Once a rematch exists, the watcher may watch it (and only watch it).
        blue.tap(".actions [data-action=rematch]")
        red.page.locator(".sheet.rematch-offer").wait_for(timeout=5000)
        red.tap(".rematch-offer [data-action=accept-rematch]")
        new = made_page(red, fake)
        watch = watcher.page.locator(".actions [data-action=watch-rematch]", has_text="Watch the rematch")
        watch.wait_for(timeout=5000)
        watch.tap()
        watcher.page.wait_for_url(f"**/p/{new}", timeout=10000)
        watcher.idle()
        assert watcher.state()["id"] == new and watcher.state()["side"] is None
        assert fake.posted("/api/pages") == []
        assert watcher.errors == [] and blue.errors == [] and red.errors == []
    finally:
        for ctx in (ctx_watch, ctx_blue, ctx_red):
            ctx.close()
