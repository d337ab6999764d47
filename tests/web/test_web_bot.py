"""A page against Dawood-bot: the bot's moves arrive on their own and are drawn like anyone's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from web_helpers import Phone, aim_at_nearest_enemy, flick_path, log

pytestmark = pytest.mark.browser


def test_page_against_dawood_bot(server: str, phone: Any, screens: Path) -> None:
    p = Phone(phone, server)
    p.goto("/")
    p.tap("[data-action=more-sizes]")
    p.tap(".choice[data-value=quick]")
    p.tap(".choice[data-value=bot]")
    p.tap(".choice[data-value=easy]")
    p.tap("[data-action=start]")
    p.page.wait_for_url("**/p/*")
    p.idle()
    st = p.state()
    assert st["mode"] == "bot" and st["side"] == "blue"
    # Dawood-bot arranges red and says ready by itself; then blue flicks.
    p.set_up_against_the_bot()
    first_turn = p.state()["turn"]["number"]
    for _ in range(3):
        st = p.state()
        if st["sideToAct"] != "blue" or st["turn"]["number"] != first_turn:
            break
        # Blue flicks until his turn is over (two with one bullet would give him another).
        if st["turn"].get("chain"):
            p.tap("[data-action=stop]")
        else:
            soldier, direction = aim_at_nearest_enemy(st)
            p.drag(flick_path(soldier, direction, 150))
        p.idle()
    # Dawood-bot answers with a flick of its own, drawn on the page; then it is blue's turn again.
    p.page.wait_for_function(
        "(() => { const s = window.dotfight.state(); "
        "return s.sideToAct === 'blue' && s.tool === 'flick' && s.inkCount >= 2; })()",
        timeout=30000,
    )
    entries = log(server, p.state()["id"])["entries"]
    assert any(e["side"] == "red" and e["action"]["type"] == "flick" for e in entries)
    assert p.state()["inkCount"] == sum(1 for e in entries for ev in e["events"] if ev["type"] == "ink")
    p.shot(screens, "bot-page")
    assert p.errors == []
