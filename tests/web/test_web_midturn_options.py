"""The web holds no rules, for real: after a move that keeps the turn — a bonus flick (two with one
bullet), a chain's link (lunge again), a send — the bars show what the server's events message says the
page allows (its last event's `options`), with no snapshot to lean on and no fallback of the browser's
own. Each move is one the engine found on a seeded page played at random; the
phone makes it by its own path (a send by touch; a flick with the exact vector found)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from web_helpers import Phone, make_page

from dotfight.engine import RuleSet, State, apply, new_page, turn_options
from tests.support.turn_keeping import KINDS, first_move_keeping_the_turn

pytestmark = pytest.mark.browser


def page_now(server: str, page_id: str, seed: int) -> State:
    """The server's page now, replayed by the engine from its stored log."""
    entries = httpx.get(f"{server}/api/pages/{page_id}/log", timeout=10).json()["entries"]
    state = new_page(RuleSet.preset("quick"), seed)
    for entry in entries:
        state, _ = apply(state, entry["side"], entry["action"])
    return state


@pytest.mark.parametrize("kind", KINDS)
def test_a_move_that_keeps_the_turn_shows_the_servers_controls(
    server: str, phone: Any, screens: Path, kind: str
) -> None:
    seed, moves, (side, action), _ = first_move_keeping_the_turn(kind)
    created = make_page(server, {"preset": "quick", "mode": "local", "seed": f"{seed:032x}"}, moves)
    page_id = created["id"]
    p = Phone(phone, server)
    p.goto(f"/p/{page_id}#seat={created['seats']['blue']}")
    p.dismiss_handover()
    before = p.state()
    assert before["version"] == len(moves) and before["sideToAct"] == side
    # From here on the page's snapshot cannot be had: what the turn allows comes with the events.
    p.page.route(f"**/api/pages/{page_id}", lambda route: route.abort())
    if kind == "send":
        # By touch: Send, the base they leave from, how many (as many as the server says may walk), where to.
        source, to = action["from"], action["to"]
        send = before["options"]["send"]
        bases = {b["id"]: b for b in before["bases"]}
        p.tap("[data-action=send]")
        p.tap_page(bases[source]["x"], bases[source]["y"])
        counts = p.page.locator(".bottombar [data-count]").count()
        assert counts == min(send["max"], len(send["men"][source]))
        p.tap(f"[data-count='{len(action['soldiers'])}']")
        p.tap_page(bases[to]["x"], bases[to]["y"])
    else:
        # The flick the engine found, exactly (a finger's pull is tested elsewhere): the screen's own path.
        p.page.evaluate(
            "([id, kind, vector]) => {"
            " const s = window.dotfight.screen(); s.ui.kind = kind; s.aim.flick(id, vector, null); }",
            [action["soldier"], action["kind"], action["vector"]],
        )
    p.page.wait_for_function(f"window.dotfight.state().version === {len(moves) + 1}")
    p.idle()
    after = page_now(server, page_id, seed)
    assert after.version == len(moves) + 1 and after.turn is not None and after.turn.side == side
    want = turn_options(after)
    assert want is not None
    st = p.state()
    assert st["options"] == want and st["sideToAct"] == side
    top = p.page.locator(".topbar").inner_text()
    bar = p.page.locator(".bottombar")
    left = want["flicks_left"]
    if kind == "link":
        assert "lunge again" in top and f"lunge again: {want['chain']['credits']} left" in top
        assert bar.locator("[data-action=stop]").inner_text().strip() == "Stop"
        assert p.page.locator("[data-kind=snipe]").is_disabled()
    else:
        assert f"{left} flick{'' if left == 1 else 's'} left" in top
        assert ("bonus flick" in top) == want["bonus"] == (kind == "bonus")
        stop = bar.locator("[data-action=stop]")
        assert stop.count() == int(want["can_stop"])
        if want["can_stop"]:
            assert stop.inner_text().strip() == ("End turn" if want["can_end_turn"] else "Stop")
    assert bar.locator("[data-action=send]").count() == int(want["send"] is not None)
    if kind == "send":
        assert "sent" in top and want["send"] is None
    flickable = [s["id"] for s in p.page.evaluate("window.dotfight.screen().aim.flickable()")]
    assert flickable == want["flickable"]
    p.shot(screens, f"midturn-{kind}")
    assert p.errors == []
