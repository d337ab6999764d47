"""Defect 3: a flick on its way shows at once ("Sending your flick…", its aim kept on the page), is
retried for as long as the page is open — long past the old 8 tries — and lands exactly once when
the line comes back; a flick the server does not make is said so in plain words."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from web_helpers import Phone, aim_at_nearest_enemy, flick_path, log, page_ready_to_flick

pytestmark = pytest.mark.browser

ACTIONS = "**/api/pages/*/actions"


def test_a_flick_offline_waits_and_lands_once(server: str, phone: Any, screens: Path) -> None:
    page_id, token = page_ready_to_flick(server)
    p = Phone(phone, server)
    p.goto(f"/p/{page_id}#seat={token}")
    before = len(log(server, page_id)["entries"])
    tries: list[float] = []

    def drop(route: Any) -> None:
        tries.append(time.monotonic())
        route.abort("internetdisconnected")

    p.page.route(ACTIONS, drop)
    soldier, direction = aim_at_nearest_enemy(p.state())
    p.drag(flick_path(soldier, direction, 160))
    # At once: the bar says it is sending and the aim stays drawn on the page.
    p.page.wait_for_function(
        "document.querySelector('.bottombar .hint').innerText.includes('Sending')", timeout=400
    )
    assert p.page.evaluate("!!window.dotfight.screen().state.overlay.sending")
    p.shot(screens, "defect3-sending")
    # Far longer than the old client's eight tries (about 21 s): still trying, and saying so.
    p.page.wait_for_timeout(24000)
    hint = p.page.locator(".bottombar .hint").inner_text()
    assert "No connection" in hint and "will be sent" in hint
    p.shot(screens, "defect3-no-connection")
    assert len(tries) >= 5  # retried with backoff, not hammered
    assert len(log(server, page_id)["entries"]) == before
    p.page.unroute(ACTIONS)
    p.page.wait_for_function("window.dotfight.state().inkCount === 1", timeout=15000)
    p.idle()
    entries = log(server, page_id)["entries"]
    assert len(entries) == before + 1 and entries[-1]["action"]["type"] == "flick"
    assert p.page.evaluate("window.dotfight.screen().state.overlay.sending") is None
    assert p.errors == []


def test_a_flick_not_made_is_said_plainly(server: str, phone: Any, screens: Path) -> None:
    page_id, token = page_ready_to_flick(server)
    p = Phone(phone, server)
    p.goto(f"/p/{page_id}#seat={token}")
    body = {
        "error": {"code": "illegal_action", "reason": "on_road", "message": "that soldier is on the road"}
    }
    p.page.route(
        ACTIONS,
        lambda route: route.fulfill(status=400, content_type="application/json", body=json.dumps(body)),
    )
    soldier, direction = aim_at_nearest_enemy(p.state())
    p.drag(flick_path(soldier, direction, 160))
    p.idle()
    refusal = p.page.locator(".toast-refusal")
    refusal.wait_for()
    assert "Your flick was not made" in refusal.inner_text()
    assert "Your flick was not made" in p.page.locator("#said").inner_text()
    p.shot(screens, "defect3-not-made")
    assert p.page.evaluate("window.dotfight.screen().state.overlay.sending") is None
    assert p.state()["tool"] == "flick"
