"""Issue 21, item 4: against Dawood-bot there is a moment to see your own shot before the bot's ink
starts (like the hand-over's), which a tap on the page skips; and the phone does not buzz for the bot's
every answer (the your-move buzz is for a person's move)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from web_helpers import Phone, aim_at_nearest_enemy, flick_path

pytestmark = pytest.mark.browser

# Counts the phone's buzzes (navigator.vibrate) from the first script on.
COUNT_BUZZES = """
window.__buzzes = 0;
Object.defineProperty(Navigator.prototype, 'vibrate', { configurable: true, value: function () {
  window.__buzzes += 1;
  return true;
} });
"""

# On every frame, whose line the pen is drawing (null: none); each change is kept with its time, and
# so is every touch on the canvas.
WATCH_PEN = """() => {
  const renderer = window.dotfight.screen().renderer;
  const draw = renderer.draw.bind(renderer);
  window.__pen = [];
  let was = null;
  renderer.draw = () => {
    draw();
    const live = renderer.state.overlay.liveInk;
    const ink = live && renderer.state.model.ink[live.index];
    const now = ink ? ink.side : null;
    if (now !== was) window.__pen.push({ t: performance.now(), side: now });
    was = now;
  };
  window.__taps = [];
  const tapped = () => window.__taps.push(performance.now());
  renderer.canvas.addEventListener('touchstart', tapped, { capture: true });
}"""

BLUES_FLICK_READY = (
    "(() => { const s = window.dotfight.state(); return s.sideToAct === 'blue' && s.tool === 'flick' "
    "&& !s.waiting.animating; })()"
)


def _bot_page(server: str, p: Phone) -> str:
    with httpx.Client(base_url=server, timeout=10) as http:
        created = http.post(
            "/api/pages", json={"preset": "quick", "mode": "bot", "bot": {"strength": "easy", "side": "red"}}
        ).json()
    p.goto(f"/p/{created['id']}#seat={created['seats']['blue']}&side=blue")
    p.tap("[data-action=quick_setup]")
    p.idle()
    p.tap("[data-action=ready]")
    p.page.wait_for_function(BLUES_FLICK_READY, timeout=20000)
    return str(created["id"])


def _flick_until_red_draws(p: Phone) -> None:
    """Blue flicks (and ends a bonus turn, as a player would) until the pen starts on red's line."""
    start = len(p.page.evaluate("window.__pen"))
    for _ in range(4):
        soldier, direction = aim_at_nearest_enemy(p.state())
        version = p.state()["version"]
        p.drag(flick_path(soldier, direction, 150))
        p.page.wait_for_function(f"window.dotfight.state().version > {version}", timeout=20000)
        # Red's answer (or blue's bonus flick) is on its way or drawn.
        p.page.wait_for_function(
            f"window.__pen.slice({start}).some((e) => e.side === 'red') "
            "|| (window.dotfight.state().sideToAct === 'blue' && !window.dotfight.state().waiting.animating"
            " && window.dotfight.state().tool !== 'tap')",
            timeout=20000,
        )
        if any(e["side"] == "red" for e in p.page.evaluate(f"window.__pen.slice({start})")):
            return
        if (p.state()["turn"] or {}).get("chain"):
            p.tap("[data-action=stop]")
            p.page.wait_for_function(
                f"window.__pen.slice({start}).some((e) => e.side === 'red')", timeout=20000
            )
            return
    raise AssertionError("Dawood-bot never answered")


def _gap_before_red(pen: list[dict[str, Any]]) -> float:
    """Seconds from the end of blue's last line to the start of red's first line after it."""
    first_red = next(i for i, e in enumerate(pen) if e["side"] == "red")
    # Red's pen may take over from blue's in the same frame: no pause at all.
    ended = [e["t"] for e in pen[:first_red] if e["side"] is None] or [pen[first_red]["t"]]
    return float(pen[first_red]["t"] - max(ended)) / 1000


def test_a_beat_to_see_your_shot_before_the_bot_answers(server: str, phone: Any, screens: Path) -> None:
    phone.add_init_script(COUNT_BUZZES)
    p = Phone(phone, server)
    _bot_page(server, p)
    p.page.evaluate(WATCH_PEN)

    # Turn 1: blue's line is drawn, then a moment to look (Dawood-bot answered long before) — no tap.
    _flick_until_red_draws(p)
    p.shot(screens, "issue21-4-bot-beat-red-starts")
    gap = _gap_before_red(p.page.evaluate("window.__pen"))
    assert gap >= 0.9, f"red's ink started {gap:.2f} s after blue's ended"
    p.page.wait_for_function(BLUES_FLICK_READY, timeout=30000)
    p.idle()

    # A later turn: a tap during the look ends it, and red's pen starts at once. (A turn whose look
    # was over before it could be seen — a bonus flick ended late — is played again.)
    for _ in range(3):
        p.page.evaluate("window.__pen = []")
        soldier, direction = aim_at_nearest_enemy(p.state())
        p.drag(flick_path(soldier, direction, 150))
        p.page.wait_for_function(
            "(() => { const s = window.dotfight.state(); return s.waiting.looking "
            "|| window.__pen.some((e) => e.side === 'red') "
            "|| (s.turn && s.turn.chain && s.sideToAct === 'blue' && !s.waiting.animating); })()",
            timeout=20000,
            polling=20,
        )
        if (p.state()["turn"] or {}).get("chain") and not p.state()["waiting"]["looking"]:
            p.tap("[data-action=stop]")
            p.page.wait_for_function(
                "window.dotfight.state().waiting.looking || window.__pen.some((e) => e.side === 'red')",
                timeout=20000,
                polling=20,
            )
        if p.state()["waiting"]["looking"]:
            p.page.evaluate("window.__taps = []")
            p.tap_page(500, 700)
            p.page.wait_for_function("window.__pen.some((e) => e.side === 'red')", timeout=10000)
            tapped = p.page.evaluate("window.__taps[0]")
            red_start = next(e["t"] for e in p.page.evaluate("window.__pen") if e["side"] == "red")
            after = (red_start - tapped) / 1000
            assert after < 0.5, f"red's ink started {after:.2f} s after the tap"
            p.page.wait_for_function(BLUES_FLICK_READY, timeout=30000)
            p.idle()
            break
        p.page.wait_for_function(BLUES_FLICK_READY, timeout=30000)
        p.idle()
    else:
        raise AssertionError("no look was ever seen to tap")

    # Two of Dawood-bot's answers: the tab says "your move", the phone did not buzz.
    assert p.page.title().startswith("(1) Your move")
    assert p.page.evaluate("window.__buzzes") == 0
    assert p.errors == []
