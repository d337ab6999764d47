"""After a batch is drawn the page asks the server for its snapshot (sync.js `settle`). If the other
side's next move arrives over the socket while that answer is on its way, the answer already holds the
new move: taking it then put the finished turn on the bars while the other side's ink was still being
drawn ("Your turn" under Dawood-bot's pen; CI saw it once in 1340 tests). The answer is held here until
the bot's line is on its way, which makes the race certain."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_web_turns_follow import WATCH_RED_PEN, bot_page_in_play
from web_helpers import aim_at_nearest_enemy, flick_path, wait_for_entries

pytestmark = pytest.mark.browser


# When the page first asked for its snapshot, by the page's clock (WATCH_RED_PEN's frames say when
# red's pen first showed), and each side's pen speed: blue's line at once, so that the page asks before
# the bot has moved; red's slow, so that the held answer surely lands while red's line is on its way.
WATCH_THE_MOMENTS = """(pageId) => {
  const screen = window.dotfight.screen();
  const fetched = window.fetch.bind(window);
  window.fetch = (path, init) => {
    const get = !init || !init.method || init.method === 'GET';
    const first = window.__asked === undefined;
    if (get && first && path === '/api/pages/' + pageId) window.__asked = performance.now();
    return fetched(path, init);
  };
  const animator = screen.animator;
  const ink = animator.ink.bind(animator);
  animator.ink = (model, ev, along) => {
    animator.speed = ev.side === 'red' ? 0.3 : 1000;
    return ink(model, ev, along);
  };
}"""


def race_the_bot(server: str, p: Any, page_id: str) -> tuple[bool, int]:
    """Plays one turn of blue's, holding the page's snapshot answers until the bot's line is being
    drawn; returns whether the page asked before that line began, and the log's length before it."""
    p.page.evaluate("window.__redFrames = []; window.__asked = undefined")
    held: list[Any] = []
    p.page.route(
        f"**/api/pages/{page_id}",
        lambda route: held.append(route) if route.request.method == "GET" else route.continue_(),
    )
    soldier, direction = aim_at_nearest_enemy(p.state())
    version = len(wait_for_entries(server, page_id, 1))
    p.drag(flick_path(soldier, direction, 150))
    entries = wait_for_entries(server, page_id, version + 1)
    if any(event["type"] == "bonus" for event in entries[version]["events"]):
        p.page.wait_for_selector("[data-action=stop]", timeout=20000)
        p.tap("[data-action=stop]")
        version += 1
    # The bot has moved and its line is on the phone's page.
    wait_for_entries(server, page_id, version + 2)
    p.page.wait_for_function("window.__redFrames.length > 0", timeout=20000)
    asked, first_red = p.page.evaluate("[window.__asked ?? null, window.__redFrames[0].at]")
    # Now the settle's question is answered (any asked later go straight through).
    for route in held:
        route.fulfill(response=route.fetch())
    p.page.unroute(f"**/api/pages/{page_id}")
    raced = asked is not None and asked < first_red
    if not raced:
        p.page.wait_for_function(
            "(() => { const s = window.dotfight.state(); "
            "return s.sideToAct === 'blue' && s.tool === 'flick'; })()",
            timeout=30000,
        )
        p.idle()
    return raced, version


def test_a_snapshot_answered_after_the_next_move_arrived_waits_for_its_ink(
    server: str, phone: Any, screens: Path
) -> None:
    page_id, p = bot_page_in_play(server, phone)
    p.page.evaluate(WATCH_RED_PEN)
    p.page.evaluate(WATCH_THE_MOMENTS, page_id)
    # The race needs the page to ask before the bot's answer comes; when the bot is quicker than
    # blue's line (a loaded machine), blue plays another turn and the race is tried again.
    for _ in range(5):
        raced, version = race_the_bot(server, p, page_id)
        if raced:
            break
    else:
        raise AssertionError("the bot answered before the page asked, five turns running")
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
