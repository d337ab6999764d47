"""A rematch offer that runs out on two phones at 360 × 640, against a real `dotfight serve` (issue 19,
item 5): red offers on a finished live page, blue sees the offer; when the offer's time is up the server
tells both phones' sockets by itself, red's button says Rematch again, blue's offer sheet closes, both say
so in the live region, and nothing on the page moves. The offer's ten minutes are shortened in the
server's own database, whose earliest offers' ends the server reads every 15 polls (30 s by default;
this server polls every 0.2 s, so every 3 s), so nobody waits for them."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import update
from test_web_people_clock import BOARD
from web_helpers import SETUP, Phone, make_page

from dotfight.server.people.rematch import OFFER_LIFETIME_S
from dotfight.store.database import make_engine
from dotfight.store.models import RematchRow
from tests.support.chromium import PHONE
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.browser

SMALL_PHONE = {**PHONE, "viewport": {"width": 360, "height": 640}}
RUNS_OUT_IN_S = 3.0


@pytest.fixture
def own_server(tmp_path: Path) -> Iterator[ServerProcess]:
    """A server of this test's own, whose database the test reaches into."""
    server = ServerProcess.on_sqlite(
        tmp_path, extra_args=["--no-access-log"], extra_env={"DOTFIGHT_TIME_OUT_POLL_S": "0.2"}
    )
    server.start()
    yield server
    server.stop()


def run_out_soon(server: ServerProcess, page_id: str) -> None:
    """Moves the standing offer back in time so that it runs out `RUNS_OUT_IN_S` from now."""
    ends = datetime.now(UTC) + timedelta(seconds=RUNS_OUT_IN_S)
    engine = make_engine(server.database_url)
    try:
        with engine.begin() as connection:
            connection.execute(
                update(RematchRow)
                .where(RematchRow.page_id == page_id)
                .values(offered_at=ends - timedelta(seconds=OFFER_LIFETIME_S["live"]), expires_at=ends)
            )
    finally:
        engine.dispose()


def said(p: Phone) -> str:
    return str(p.page.evaluate("(document.getElementById('said') || {}).innerText || ''"))


def test_an_offer_that_runs_out_gives_both_phones_rematch_again(
    own_server: ServerProcess, browser: Any, screens: Path
) -> None:
    server = own_server.base_url
    created = make_page(server, {"preset": "quick", "mode": "live"}, [*SETUP, ("blue", {"type": "resign"})])
    old, seats = created["id"], created["seats"]
    ctx_blue, ctx_red = browser.new_context(**SMALL_PHONE), browser.new_context(**SMALL_PHONE)
    try:
        blue, red = Phone(ctx_blue, server), Phone(ctx_red, server)
        blue.goto(f"/p/{old}#seat={seats['blue']}&side=blue")
        red.goto(f"/p/{old}#seat={seats['red']}&side=red")
        red.page.locator(".sheet.end [data-action=rematch]").wait_for()
        red.tap(".sheet.end [data-action=rematch]")
        red.page.locator(".sheet.end [data-action=withdraw-rematch]").wait_for()
        blue.page.locator(".sheet.rematch-offer").wait_for(timeout=5000)
        boards = [p.page.evaluate(BOARD) for p in (blue, red)]
        red.shot(screens, "rematch-offer-standing")

        run_out_soon(own_server, old)
        # Told by the server within its read (3 s) of the new end, plus the end itself: a bound of 10 s.
        button = red.page.locator(".sheet.end [data-action=rematch]")
        button.wait_for(timeout=10_000)
        assert button.inner_text() == "Rematch"
        blue.page.locator(".sheet.rematch-offer").wait_for(state="detached", timeout=5000)
        assert "Your rematch offer ran out." in said(red)
        assert "Red's rematch offer ran out." in said(blue)
        assert [p.page.evaluate(BOARD) for p in (blue, red)] == boards  # nothing moved
        assert httpx.get(f"{server}/api/pages/{old}/rematch", timeout=10).json() == {
            "offered_by": None,
            "page": None,
        }
        red.shot(screens, "rematch-offer-ran-out")
        # Blue's Rematch is now an offer of its own, which red hears.
        blue.page.locator(".sheet.end [data-action=rematch]").wait_for()
        blue.tap(".sheet.end [data-action=rematch]")
        red.page.locator(".sheet.rematch-offer").wait_for(timeout=5000)
        assert blue.errors == [] and red.errors == []
    finally:
        ctx_blue.close()
        ctx_red.close()
