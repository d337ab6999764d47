"""After a batch is drawn the page asks the server for its snapshot (sync.js `settle`). If the other
side's next move arrives over the socket while that answer is on its way, the answer already holds the
new move: taking it then put the finished turn on the bars while the other side's ink was still being
drawn ("Your turn" under Dawood-bot's pen; CI saw it once in 1340 tests). The answer is held here until
the bot's line is on its way, which makes the race certain."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_web_turns_follow import WATCH_RED_PEN, bot_page_in_play, wait_for_entries
from web_helpers import aim_at_nearest_enemy, flick_path

pytestmark = pytest.mark.browser


def test_a_snapshot_answered_after_the_next_move_arrived_waits_for_its_ink(
    server: str, phone: Any, screens: Path
) -> None:
    page_id, p = bot_page_in_play(server, phone)
    # The snapshot requests from here on are held until the bot's line is being drawn.
    held: list[Any] = []
    p.page.route(
        f"**/api/pages/{page_id}",
        lambda route: held.append(route) if route.request.method == "GET" else route.continue_(),
    )
    p.page.evaluate(WATCH_RED_PEN)
    # Blue's line is drawn at once, so that the page asks for its snapshot before the bot has moved.
    p.page.evaluate("window.dotfight.screen().animator.speed = 1000")
    soldier, direction = aim_at_nearest_enemy(p.state())
    version = len(wait_for_entries(server, page_id, 1))
    p.drag(flick_path(soldier, direction, 150))
    entries = wait_for_entries(server, page_id, version + 1)
    if any(event["type"] == "bonus" for event in entries[version]["events"]):
        p.page.wait_for_selector("[data-action=stop]", timeout=20000)
        p.tap("[data-action=stop]")
        version += 1
    for _ in range(1000):
        if held:
            break
        p.page.wait_for_timeout(20)
    assert held, "the page asked for no snapshot after blue's line"
    # A slow pen for red's line, so that the held answer surely lands while it is on its way.
    p.page.evaluate("window.dotfight.screen().animator.speed = 0.3")
    assert p.page.evaluate("window.__redFrames.length") == 0, "the bot moved before the page asked"
    # The bot has moved; its line is on the phone's page, and the settle's question is still unanswered.
    wait_for_entries(server, page_id, version + 2)
    p.page.wait_for_function("window.__redFrames.length > 0", timeout=20000)
    for route in held:
        route.fulfill(response=route.fetch())
    p.page.unroute(f"**/api/pages/{page_id}")
    p.page.wait_for_function(
        "(() => { const s = window.dotfight.state(); return window.__redFrames.length > 3 "
        "&& s.sideToAct === 'blue' && s.tool === 'flick'; })()",
        timeout=30000,
    )
    frames = p.page.evaluate("window.__redFrames")
    p.shot(screens, "settle-race-after-bot")
    for f in frames:
        assert "Your turn" not in f["status"], f
    assert any("Dawood-bot" in f["status"] for f in frames)
    # The page still settles on the server's snapshot once the bot's line is drawn.
    p.idle()
    assert p.state()["version"] == len(wait_for_entries(server, page_id, version + 2))
    assert "Your turn" in p.page.locator(".topbar .status").inner_text()
    assert p.errors == []
