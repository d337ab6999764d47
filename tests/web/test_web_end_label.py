"""Issue 21, item 6: at the end of a page the top bar says who won from the game-over event on. The
event cleared whose turn it was while the page still counted as in play (its `phase: over` comes
after), so for a moment the bar read "to flick" with no name, and "…"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from web_helpers import Phone, page_ready_to_flick

pytestmark = pytest.mark.browser

# The page as drawn between a finishing flick's `game_over` and its `phase: over`, through the app's
# own model and bars, shown in the page screen's top bar.
BETWEEN = """async () => {
  const { applyEvent } = await import('/js/model.js');
  const { statusView, barView } = await import('/js/controls.js');
  const screen = window.dotfight.screen();
  const m = screen.model;
  const ui = { ...screen.ui, busy: false };
  const seen = [];
  const look = () => {
    const st = statusView(m, screen.options(), ui);
    seen.push({ line1: st.line1, line2: st.line2, hint: barView(m, screen.options(), ui).hint });
  };
  const line = { side: 'blue', kind: 'snipe', soldier: 'x', points: [[0, 0], [1, 1]], power: 1, reach: 1 };
  applyEvent(m, { type: 'ink', ...line });
  look();
  applyEvent(m, { type: 'game_over', winner: 'red', reason: 'resigned' });
  look();
  screen.refresh();
  applyEvent(m, { type: 'phase', phase: 'over' });
  look();
  return seen;
}"""


def test_the_bar_says_who_won_from_the_game_over_event(server: str, phone: Any, screens: Path) -> None:
    page_id, token = page_ready_to_flick(server)
    p = Phone(phone, server)
    p.goto(f"/p/{page_id}#seat={token}")
    before, between, after = p.page.evaluate(BETWEEN)
    assert before["line1"].startswith("Blue")
    assert between["line1"] == "Red wins" and between["line2"] == "by resignation"
    assert "to flick" not in between["line1"] and between["line2"] != "…"
    assert between == after
    top = p.page.locator(".topbar .status").inner_text()
    assert top.startswith("Red wins")
    p.shot(screens, "end-label-between-game-over-and-phase")
    assert p.errors == []
