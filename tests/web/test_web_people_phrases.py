"""Issue 19, item 8 on the phone: phrases between the two players — one tap from the fixed list, a
bubble in the speaker's margin on the other phone that never moves the page, mute kept on the phone,
the server's cap said gently, what was said kept for a link player and shown at its moment in replay.

`/say`, `/said` and the socket's `said` are faked (people_fakes.py); pages and sockets are real.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from people_fakes import FakeServer, iso
from test_web_people_clock import BOARD, live_page, open_seat
from web_helpers import SETUP, Phone, make_page

from tests.support.chromium import PHONE

pytestmark = pytest.mark.browser


def say(p: Phone, words: str) -> None:
    p.tap(".margin-bottom [data-action=say]")
    p.page.locator(".say-sheet").wait_for()
    p.tap(f".say-sheet .phrases >> text={words}")
    p.idle()


def seated_fake(server: str, created: dict[str, Any]) -> FakeServer:
    fake = FakeServer(server)
    fake.seat_sides = {created["seats"]["blue"]: "blue", created["seats"]["red"]: "red"}
    return fake


def test_a_phrase_shows_on_the_other_phone_without_moving_the_page(
    server: str, browser: Any, screens: Path
) -> None:
    created = live_page(server)
    fake = seated_fake(server, created)
    ctx_blue, ctx_red = browser.new_context(**PHONE), browser.new_context(**PHONE)
    try:
        blue = open_seat(ctx_blue, server, created, "blue", fake)
        red = open_seat(ctx_red, server, created, "red", fake)
        board_blue, board_red = blue.page.evaluate(BOARD), red.page.evaluate(BOARD)
        say(red, "Good game!")
        assert fake.posted(f"/api/pages/{created['id']}/say") == [{"phrase": "good_game"}]
        # On blue's phone, in red's margin across the page; on red's, below it.
        bubble = blue.page.locator(".margin-top .bubble-red")
        bubble.wait_for(timeout=5000)
        assert bubble.inner_text() == "Good game!"
        assert red.page.locator(".margin-bottom .bubble-red").inner_text() == "Good game!"
        assert "Red says: Good game!" in blue.page.locator("#said").inner_text()
        assert blue.page.evaluate(BOARD) == board_blue and red.page.evaluate(BOARD) == board_red
        blue.shot(screens, "people-phrase-bubble")
        # Gone after a few seconds.
        bubble.wait_for(state="detached", timeout=6000)

        # Blue mutes red: red's next phrase does not show, and the mute is kept on blue's phone.
        blue.tap(".margin-bottom [data-action=say]")
        blue.tap(".say-sheet [data-action=mute]")
        assert blue.page.locator(".say-sheet [data-action=mute]").inner_text() == "Unmute red"
        blue.page.go_back()
        blue.page.locator(".say-sheet").wait_for(state="detached")
        say(red, "Thanks!")
        red.page.locator(".margin-bottom .bubble-red", has_text="Thanks!").wait_for()
        blue.page.wait_for_timeout(1000)
        assert blue.page.locator(".bubble").count() == 0
        blue.goto(f"/p/{created['id']}")
        say(red, "Well played!")
        blue.page.wait_for_timeout(1000)
        assert blue.page.locator(".bubble").count() == 0

        # Over the server's cap: said gently, not as a refusal.
        fake.say_cap = len([s for s in fake.said if s["side"] == "red"])
        say(red, "Hello!")
        toast = red.page.locator("#toasts .toast")
        toast.wait_for()
        assert toast.inner_text() == "That is all you can say on this page."
        assert "toast-refusal" not in (toast.get_attribute("class") or "")
        assert blue.errors == [] and red.errors == []
    finally:
        ctx_blue.close()
        ctx_red.close()


def test_kept_phrases_show_on_a_link_page_and_in_its_replay(server: str, browser: Any, screens: Path) -> None:
    created = make_page(server, {"preset": "quick", "mode": "link"}, [*SETUP, ("blue", {"type": "resign"})])
    fake = seated_fake(server, created)
    # Red said "Good luck!" when the page was at version 2 (blue was away).
    fake.said = [{"side": "red", "phrase": "good_luck", "at": iso(fake.now() - 3600), "version": 2}]
    ctx = browser.new_context(**PHONE)
    try:
        blue = open_seat(ctx, server, created, "blue", fake)
        blue.tap(".sheet.end >> text=Look at the page")
        kept = blue.page.locator(".margin-top .bubble-red", has_text="Good luck!")
        kept.wait_for(timeout=5000)
        blue.shot(screens, "people-phrase-kept")
        # Opened again, it was seen already: not shown again.
        blue.goto(f"/p/{created['id']}")
        blue.page.wait_for_timeout(800)
        assert blue.page.locator(".bubble").count() == 0
        # The replay shows it at its moment: at move 2, not at the finished page (move 4).
        blue.goto(f"/p/{created['id']}#view=replay")
        assert blue.state()["at"] == 4 and blue.page.locator(".bubble").count() == 0
        blue.tap("[data-action=back]")
        assert blue.page.locator(".bubble").count() == 0
        blue.tap("[data-action=back]")
        assert blue.state()["at"] == 2
        blue.page.locator(".margin-top .bubble-red", has_text="Good luck!").wait_for(timeout=3000)
        blue.shot(screens, "people-phrase-replay")
        assert blue.errors == []
    finally:
        ctx.close()
