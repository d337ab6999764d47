"""Issue 21, item 5: the offline screen clears by itself when the server comes back (it asks again with
backoff, no tap needed), and it says which of the two is away — the server, while the phone is online."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from web_helpers import Phone, page_ready_to_flick

from tests.support.chromium import PHONE
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.browser

CONTROLLED = "navigator.serviceWorker.controller !== null"


@pytest.fixture()
def own_server(tmp_path: Path) -> Iterator[ServerProcess]:
    """A server of its own, which the test stops and starts again on the same port."""
    process = ServerProcess.on_sqlite(tmp_path, extra_args=["--no-access-log"])
    try:
        process.start()
        yield process
    finally:
        process.stop()


def test_the_offline_screen_clears_by_itself_when_the_server_is_back(
    browser: Any, own_server: ServerProcess, screens: Path
) -> None:
    base = own_server.base_url
    page_id, token = page_ready_to_flick(base)
    ctx = browser.new_context(**PHONE)
    try:
        p = Phone(ctx, base)
        p.goto(f"/p/{page_id}#seat={token}")
        p.page.evaluate("navigator.serviceWorker.ready.then(() => true)")
        p.page.reload()
        p.page.wait_for_function(CONTROLLED)
        p.idle()
        asked: list[str] = []
        p.page.on("request", lambda r: asked.append(r.url) if r.url.endswith("/api/health") else None)

        # The server stops; the phone stays online. The page opens from the phone's copy and says that
        # the server is away — not the phone's connection.
        own_server.kill()
        p.page.goto(f"{base}/p/{page_id}")
        note = p.page.locator(".offline-note")
        note.wait_for()
        words = note.inner_text()
        assert "server" in words.lower() and "not answering" in words
        assert "once this phone is back online" not in words and "You are offline" not in words
        p.shot(screens, "issue21-5-server-away")
        # It keeps asking by itself, with backoff (at 0, 1 and 3 s: three asks within about 4 s).
        for _ in range(80):
            if len(asked) >= 3:
                break
            p.page.wait_for_timeout(100)
        assert 3 <= len(asked) <= 5, asked
        assert p.state()["screen"] == "offline"

        # The server is back: without a tap, the screen clears and the page opens.
        own_server.start()
        p.page.wait_for_function("window.dotfight.state().screen === 'page'", timeout=20000)
        p.idle()
        assert p.state()["phase"] == "play" and p.state()["id"] == page_id
        p.shot(screens, "issue21-5-server-back")
        assert p.errors == []
    finally:
        ctx.close()
