"""Defect 2: the bars follow the `turn` events as they are drawn — never "Your turn" (nor Send) while
Dawood-bot's ink is on its way — and a choice half-made meanwhile does not outlive its turn.
Defect 7: a watcher of a bot page is told who is really flicking."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from web_helpers import Phone, aim_at_nearest_enemy, flick_path, wait_for_entries

from tests.support.chromium import PHONE

pytestmark = pytest.mark.browser


# On every frame that draws red's pen, what the bars say and offer.
WATCH_RED_PEN = """() => {
  const renderer = window.dotfight.screen().renderer;
  const draw = renderer.draw.bind(renderer);
  window.__redFrames = [];
  renderer.draw = () => {
    const tip = renderer.state.overlay.penTip;
    if (tip && tip.side === 'red') window.__redFrames.push({
      at: performance.now(),
      status: document.querySelector('.topbar .status').innerText,
      buttons: [...document.querySelectorAll('.bottombar button')].map((b) => b.innerText.trim()),
      tool: window.dotfight.state().tool,
    });
    // A player tapping Send while the bot's line is drawn (if the bar offers it).
    const send = document.querySelector('.bottombar [data-action=send]');
    if (tip && tip.side === 'red' && send && !send.disabled) send.click();
    draw();
  };
}"""


def bot_page_in_play(server: str, phone: Any) -> tuple[str, Phone]:
    """Opens a new Quick page against Dawood-bot as blue and sets it up; returns its id and the phone."""
    with httpx.Client(base_url=server, timeout=10) as http:
        created = http.post(
            "/api/pages", json={"preset": "quick", "mode": "bot", "bot": {"strength": "easy", "side": "red"}}
        ).json()
    page_id, token = created["id"], created["seats"]["blue"]
    p = Phone(phone, server)
    p.goto(f"/p/{page_id}#seat={token}&side=blue")
    p.set_up_against_the_bot()
    return page_id, p


def test_bars_follow_the_bots_turn(server: str, browser: Any, phone: Any, screens: Path) -> None:
    page_id, p = bot_page_in_play(server, phone)
    p.page.evaluate(WATCH_RED_PEN)
    soldier, direction = aim_at_nearest_enemy(p.state())
    # The server's log says which entry is blue's flick (the phone's version may still be on its way).
    version = len(wait_for_entries(server, page_id, 1))
    p.drag(flick_path(soldier, direction, 150))
    # A snipe through two men earns a bonus flick: blue then ends its turn, as a player would, so that
    # Dawood-bot flicks next (without it, such a page waited for a red line that never came).
    flicked = wait_for_entries(server, page_id, version + 1)[version]
    if any(event["type"] == "bonus" for event in flicked["events"]):
        p.tap("[data-action=stop]")
    # Dawood-bot's line is drawn; then it is blue's move again.
    p.page.wait_for_function(
        "(() => { const s = window.dotfight.state(); return window.__redFrames.length > 3 "
        "&& s.sideToAct === 'blue' && s.tool === 'flick'; })()",
        timeout=30000,
    )
    frames = p.page.evaluate("window.__redFrames")
    p.shot(screens, "defect2-after-bot")
    assert frames
    for f in frames:
        assert "Your turn" not in f["status"], f
        assert "Send" not in f["buttons"] and "End turn" not in f["buttons"], f
        assert f["tool"] == "tap"
    assert any("Dawood-bot" in f["status"] for f in frames)
    # Blue's next turn starts clean: no send half-made, the flick tool ready, the bar offering the turn.
    st = p.state()
    assert st["tool"] == "flick"
    assert "Send:" not in p.page.locator(".bottombar .hint").inner_text()
    assert "Your turn" in p.page.locator(".topbar .status").inner_text()

    # A watcher of the bot page on blue's turn is told blue is flicking, not that the bot thinks.
    ctx = browser.new_context(**PHONE)
    try:
        w = Phone(ctx, server)
        w.goto(f"/p/{page_id}")
        hint = w.page.locator(".bottombar .hint").inner_text()
        assert "Blue is flicking" in hint and "Dawood-bot" not in hint
        w.shot(screens, "defect7-bot-watcher")
    finally:
        ctx.close()
    assert p.errors == []
