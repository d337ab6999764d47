"""Issue 19 on the phone: the cover's clock presets for live and link pages, the exercise book's
pages where it is your move first with the time left, and a page that ended on time saying so in the
book, the bar, the end sheet and the replay.

The summaries' new fields, the end's reason and `clock` in `POST /api/pages` (which this round's
server refuses, so the fake notes it and leaves it out) are faked on the wire (people_fakes.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from people_fakes import FakeServer, iso
from web_helpers import SETUP, Phone, make_page

pytestmark = pytest.mark.browser


@pytest.mark.parametrize(
    ("mode", "choice", "clock"),
    [
        ("live", "300+3", {"initial_s": 300, "increment_s": 3}),
        ("link", "259200", {"per_move_s": 259200}),
        ("live", "none", None),
    ],
)
def test_the_cover_offers_clocks_for_pages_between_two_people(
    server: str, phone: Any, mode: str, choice: str, clock: dict[str, int] | None
) -> None:
    fake = FakeServer(server)
    p = Phone(phone, server)
    fake.attach(p.page)
    p.goto("/")
    assert p.page.locator("[data-clock]:visible").count() == 0
    p.tap(".choice[data-value=bot]")
    assert p.page.locator("[data-clock]:visible").count() == 0
    p.tap(f".choice[data-value={mode}]")
    block = p.page.locator(f"[data-clock={mode}]")
    block.wait_for()
    assert block.is_visible() and p.page.locator("[data-clock]:visible").count() == 1
    # No clock unless chosen.
    assert block.locator(".choice.chosen").inner_text() in ("No clock", "No limit")
    block.locator(f'.choice[data-value="{choice}"]').tap()
    p.tap("[data-action=start]")
    p.page.wait_for_url("**/p/*")
    p.idle()
    [body] = fake.posted("/api/pages")
    assert body.get("clock") == clock and body["mode"] == mode
    assert p.errors == []


def test_the_book_puts_your_move_first_with_the_time_left(server: str, phone: Any, screens: Path) -> None:
    link = {"preset": "quick", "mode": "link"}
    yours = make_page(server, link, list(SETUP))  # blue to flick: this phone holds blue
    theirs = make_page(server, link, list(SETUP))  # blue to flick: this phone holds red
    on_time = make_page(server, {"preset": "quick", "mode": "live"}, [*SETUP, ("blue", {"type": "resign"})])
    fake = FakeServer(server)
    deadline = fake.now() + 2 * 86400 + 3600
    fake.summary_extra = {
        yours["id"]: {"clock": {"per_move_s": 259200}, "deadline": iso(deadline), "running": "blue"},
        theirs["id"]: {
            "clock": {"per_move_s": 259200},
            "deadline": iso(fake.now() + 5.5 * 3600),
            "running": "blue",
        },
        on_time["id"]: {"reason": "time"},
    }
    fake.end_reason = "time"
    p = Phone(phone, server)
    fake.attach(p.page)
    p.goto("/")

    # The book as this phone keeps it: your move's page the oldest opened, the others newer.
    def entry(page: dict[str, Any], mode: str, side: str, opened: int) -> dict[str, Any]:
        return {
            "id": page["id"],
            "mode": mode,
            "preset": "quick",
            "token": page["seats"][side],
            "side": side,
            "openedAt": opened,
        }

    entries = [
        entry(on_time, "live", "red", 3),
        entry(theirs, "link", "red", 2),
        entry(yours, "link", "blue", 1),
    ]
    p.page.evaluate("(e) => localStorage.setItem('dotfight.book.v1', JSON.stringify(e))", entries)
    p.goto("/#book")
    items = p.page.locator(".book-item")
    p.page.locator(".book-item .time-left").first.wait_for()
    assert items.evaluate_all("(els) => els.map((e) => e.dataset.id)") == [
        yours["id"],
        on_time["id"],
        theirs["id"],
    ]
    assert (
        "your move" in items.nth(0).inner_text()
        and "Blue to flick · 2 days left" in items.nth(0).inner_text()
    )
    assert "Red won — blue ran out of time" in items.nth(1).inner_text()
    assert "Blue to flick · 5 hours left" in items.nth(2).inner_text()
    p.shot(screens, "people-book")
    # The page that ended on time says so in its bar, its end sheet and its replay.
    p.goto(f"/p/{on_time['id']}")
    p.page.locator(".sheet.end").wait_for()
    assert "Blue ran out of time." in p.page.locator(".sheet.end").inner_text()
    assert p.page.locator(".status .detail").inner_text() == "blue ran out of time"
    p.tap(".sheet.end >> text=Replay")
    p.page.wait_for_url("**#view=replay")
    p.idle()
    assert (
        p.page.locator(".status .detail").inner_text()
        == "Blue is out of time · Red wins, blue ran out of time"
    )
    stored = json.loads(p.page.evaluate("localStorage.getItem('dotfight.book.v1')"))
    assert {e["id"] for e in stored} >= {yours["id"], theirs["id"], on_time["id"]}
    assert p.errors == []
