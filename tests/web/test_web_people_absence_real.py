"""Issue 19, item 4 on the phone against the real server, nothing faked: a live page whose side to act
has gone, seen by the one who stayed (DOTFIGHT_LIVE_ABSENCE_GRACE_S=3). The countdown comes with the
server's `claim_at`, the claim opens after the grace and `claim` ends the page (`abandon` written for the
side that left), and none of it moves the page under the thumb."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from web_helpers import SETUP, Phone, make_page
from websockets.sync.client import connect

from tests.support.chromium import PHONE
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.browser

GRACE_S = 3.0
BOARD = (
    "(() => { const r = document.querySelector('.stage canvas').getBoundingClientRect();"
    " return [r.x, r.y, r.width, r.height]; })()"
)


@pytest.fixture(scope="module")
def absence_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server of its own with a short absence grace."""
    folder = tmp_path_factory.mktemp("absence-server")
    process = ServerProcess(
        f"sqlite:///{folder / 't.sqlite3'}",
        folder / "server.log",
        extra_args=["--no-access-log"],
        extra_env={"DOTFIGHT_LIVE_ABSENCE_GRACE_S": str(GRACE_S), "DOTFIGHT_PAGE_CREATION_BURST": "1000"},
    )
    try:
        process.start()
        yield process
    finally:
        process.stop()


def came_and_went(server: ServerProcess, created: dict[str, Any]) -> float:
    """Blue's phone was on the page and went (its socket said hello, then closed); returns when."""
    with connect(server.ws_url(created["id"])) as blue:
        blue.send(json.dumps({"type": "hello", "token": created["seats"]["blue"]}))
        assert json.loads(blue.recv(10))["type"] == "state"
        time.sleep(0.3)  # its presence is shared (the server gathers presence over 0.05 s)
    return time.time()


def test_the_claim_appears_after_the_grace_and_ends_the_page(
    absence_server: ServerProcess, browser: Any, screens: Path
) -> None:
    base = absence_server.base_url
    created = make_page(base, {"preset": "quick", "mode": "live"}, list(SETUP))  # blue's turn of play
    left_at = came_and_went(absence_server, created)
    ctx = browser.new_context(**PHONE)
    try:
        p = Phone(ctx, base)
        p.goto(f"/p/{created['id']}#seat={created['seats']['red']}&side=red")
        board = p.page.evaluate(BOARD)
        countdown = p.page.locator(".margin-top .away")
        countdown.wait_for()
        assert countdown.inner_text().startswith("Blue left the page — claim in 0:0")
        assert p.page.locator(".claim-sheet").count() == 0
        p.page.locator(".sheet.claim-sheet").wait_for(timeout=(GRACE_S + 5) * 1000)
        opened = time.time()
        assert left_at + GRACE_S - 0.3 <= opened <= left_at + GRACE_S + 2.0, opened - left_at
        assert p.page.evaluate(BOARD) == board
        p.shot(screens, "people-absence-real-sheet")
        p.tap(".claim-sheet [data-action=claim]")
        p.page.locator(".sheet.end h2", has_text="Red wins!").wait_for(timeout=10000)
        p.idle()
        assert p.page.evaluate(BOARD) == board
        assert p.page.locator(".margin .away").count() == 0
        p.shot(screens, "people-absence-real-won")
        assert p.errors == []
    finally:
        ctx.close()
    page = httpx.get(f"{base}/api/pages/{created['id']}", timeout=10).json()
    assert (page["phase"], page["winner"]) == ("over", "red")
    log = httpx.get(f"{base}/api/pages/{created['id']}/log", timeout=10).json()["entries"]
    assert log[-1]["side"] == "blue" and log[-1]["action"] == {"type": "abandon"}
    assert {"type": "game_over", "winner": "red", "reason": "abandoned"} in log[-1]["events"]
