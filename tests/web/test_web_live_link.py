"""A real-time page on two phones: the shared link, live updates, presence, a watcher, reconnects."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest
from web_helpers import Phone, aim_at_nearest_enemy, flick_path, log

from tests.support.chromium import PHONE

pytestmark = pytest.mark.browser


def wait_state(phone: Phone, condition: str, timeout: float = 15000) -> None:
    """Waits until a JavaScript condition on `s` (the app's state) holds."""
    phone.page.wait_for_function(
        f"(() => {{ const s = window.dotfight.state(); return {condition}; }})()", timeout=timeout
    )


def flick(phone: Phone) -> None:
    soldier, direction = aim_at_nearest_enemy(phone.state())
    phone.drag(flick_path(soldier, direction, 160))


def play_until(phone: Phone, side: str) -> None:
    """Lets `phone` (the side to act) flick until the turn passes to `side` (a bonus may give more flicks)."""
    for _ in range(4):
        st = phone.state()
        if st["sideToAct"] == side:
            return
        if (st["turn"] or {}).get("chain"):
            phone.tap("[data-action=stop]")
        else:
            flick(phone)
        phone.idle()
    raise AssertionError("the turn did not pass")


def test_live_page_on_two_phones(server: str, browser: Any, phone: Any, screens: Path) -> None:
    blue = Phone(phone, server)
    # The share sheet opens by itself with red's link (carrying its side) and the watch link.
    links = blue.start_page("quick", "live")
    assert len(links) == 2 and "#seat=" in links[0] and links[0].endswith("&side=red") and "#" not in links[1]
    blue.shot(screens, "share-links")
    blue.page.locator(".sheet button", has_text="Done").tap()
    page_id = blue.state()["id"]

    red_ctx = browser.new_context(**PHONE)
    watch_ctx = browser.new_context(**PHONE)
    try:
        red = Phone(red_ctx, server)
        red.open_link(links[0])
        st = red.state()
        assert st["id"] == page_id and st["side"] == "red" and st["tool"] == "tap"
        # The seat token is kept on the phone, not left in the address bar.
        assert "seat=" not in red.page.url
        wait_state(blue, "s.presence && s.presence.blue && s.presence.red")

        # A forged seat link is refused in words and the page is followed as a watcher.
        watcher = Phone(watch_ctx, server)
        watcher.page.goto(links[1] + "#seat=forged-seat-token")
        watcher.page.wait_for_function("window.dotfight !== undefined")
        watcher.page.locator(".toast-refusal", has_text="only watch").wait_for()
        watcher.idle()
        assert (
            watcher.state()["tool"] == "tap"
            and watcher.page.locator("[data-action=quick_setup]").count() == 0
        )

        # Blue's quick setup appears on red's phone and the watcher's without reloading.
        blue.tap("[data-action=quick_setup]")
        blue.idle()
        n_bases = len(blue.state()["bases"])
        assert n_bases == 6
        wait_state(red, f"s.bases.length === {n_bases}")
        wait_state(watcher, f"s.bases.length === {n_bases}")
        blue.tap("[data-action=ready]")
        blue.idle()
        wait_state(red, "s.phase === 'positioning' && s.sideToAct === 'red' && s.tool === 'arrange'")
        red.tap("[data-action=ready]")
        red.idle()
        wait_state(blue, "s.phase === 'play' && s.tool === 'flick'")
        red.shot(screens, "live-red-waiting")

        # Blue flicks; red sees the ink live.
        play_until(blue, "red")
        ink = blue.state()["inkCount"]
        wait_state(red, f"s.inkCount === {ink} && s.tool === 'flick'")
        wait_state(watcher, f"s.inkCount === {ink} && s.tool === 'tap'")

        # Blue's socket drops; red flicks meanwhile; blue reconnects and catches up from its version.
        blue.page.evaluate("window.dotfight.dropSocket()")
        play_until(red, "blue")
        version = red.state()["version"]
        wait_state(
            blue,
            f"s.version === {version} && s.inkCount === {red.state()['inkCount']} && s.online === 'online'",
        )
        blue.idle()

        # Blue goes offline and flicks: the move waits, is retried with its move_id, and lands once.
        before = len(log(server, page_id)["entries"])
        phone.set_offline(True)
        blue.page.evaluate("window.dotfight.dropSocket()")
        flick(blue)
        blue.page.wait_for_timeout(800)
        assert len(log(server, page_id)["entries"]) == before
        phone.set_offline(False)
        blue.idle()
        entries = log(server, page_id)["entries"]
        assert (
            len(entries) == before + 1
            and entries[-1]["side"] == "blue"
            and entries[-1]["action"]["type"] == "flick"
        )
        move_ids = [e["move_id"] for e in entries if e.get("move_id")]
        assert len(move_ids) == len(set(move_ids))
        assert [e["version"] for e in entries] == list(range(1, len(entries) + 1))
        wait_state(red, f"s.version === {entries[-1]['version']}")
        red.shot(screens, "live-red-after")
        watcher.shot(screens, "live-watcher")

        # Red leaves: blue sees red away.
        red_ctx.close()
        wait_state(blue, "s.presence && !s.presence.red")
        assert blue.errors == [] and watcher.errors == []
    finally:
        for ctx in (red_ctx, watch_ctx):
            with contextlib.suppress(Exception):  # already closed above
                ctx.close()
