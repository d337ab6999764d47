"""The web holds no rules: who may flick, which kinds, the hand's steadiness, a bonus flick and where a
convoy may go are read from the server's turn options (C6) — not worked out in the browser."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from web_helpers import Phone, page_ready_to_flick

pytestmark = pytest.mark.browser


def test_the_page_follows_the_servers_turn_options(server: str, phone: Any) -> None:
    page_id, token = page_ready_to_flick(server)
    snap = httpx.get(f"{server}/api/pages/{page_id}", timeout=10).json()
    blue = [s for s in snap["soldiers"] if s["side"] == "blue"]
    allowed, barred = blue[0], blue[-1]
    options = {
        "side": "blue", "flicks_left": 1, "flickable": [allowed["id"]], "kinds": ["snipe"], "chain": None,
        "steadiness": 0.5, "last_stand": False, "bonus": True, "can_stop": True, "can_end_turn": True,
        "send": None,
    }  # fmt: skip
    p = Phone(phone, server)
    p.page.route(
        f"**/api/pages/{page_id}",
        lambda route: route.fulfill(
            status=200, content_type="application/json", body=json.dumps({**snap, "options": options})
        ),
    )
    p.goto(f"/p/{page_id}#seat={token}")
    assert p.state()["options"] == options
    bar = p.page.locator(".bottombar")
    assert bar.locator("[data-action=send]").count() == 0  # send: null
    assert bar.locator("[data-action=stop]").inner_text().strip() == "End turn"
    assert p.page.locator("[data-kind=lunge]").is_disabled()  # kinds: snipe only
    assert "bonus flick" in p.page.locator(".topbar").inner_text()
    # A soldier the server does not list cannot be pulled; the listed one can, with the server's steadiness.
    p.drag(
        [(barred["x"], barred["y"]), (barred["x"], barred["y"] + 60), (barred["x"], barred["y"] + 120)],
        release=False,
    )
    assert p.page.evaluate("window.dotfight.screen().state.overlay.aim") is None
    p.touch("touchEnd")
    p.drag(
        [
            (allowed["x"], allowed["y"]),
            (allowed["x"], allowed["y"] - 200),
            (allowed["x"], allowed["y"] - 450),
        ],
        release=False,
    )
    spread = p.page.evaluate("window.dotfight.screen().state.overlay.aim.spread")
    rules = snap["rules"]
    expected = p.page.evaluate(
        "async ([rules, pull]) => (await import('/js/preview.js'))"
        ".flickPreview(rules, pull, { steady: 0.5, link: 0 }).sigma * 2",
        [rules, 450],
    )
    assert spread == pytest.approx(min(3.14159 / 2, expected), rel=1e-6) and spread > 0
    p.touch("touchMove", *p.client(allowed["x"], allowed["y"]))  # slid back: put down
    p.touch("touchEnd")
    assert p.errors == []


# What the page thinks the options are at the moment each `turn` event is drawn.
WATCH_TURNS = """() => {
  const screen = window.dotfight.screen();
  const announce = screen.announce.bind(screen);
  window.__turnOptions = [];
  screen.announce = (ev, model) => {
    announce(ev, model);
    if (ev.type === 'turn') window.__turnOptions.push(window.dotfight.state().options);
  };
}"""


def test_a_turn_event_brings_the_next_turns_options(server: str, phone: Any) -> None:
    """C6: the `turn` event carries the options of the turn it opens; they hold once it is drawn."""
    page_id, token = page_ready_to_flick(server)
    snap = httpx.get(f"{server}/api/pages/{page_id}", timeout=10).json()
    red = [s for s in snap["soldiers"] if s["side"] == "red"]
    options = {
        "side": "red", "flicks_left": 1, "flickable": [red[0]["id"]], "kinds": ["snipe", "lunge"],
        "chain": None, "steadiness": 1.0, "last_stand": False, "bonus": False, "can_stop": False,
        "can_end_turn": False, "send": None,
    }  # fmt: skip
    p = Phone(phone, server)

    def with_options(route: Any) -> None:
        answer = route.fetch().json()
        for ev in answer.get("events", []):
            if ev["type"] == "turn":
                ev["options"] = options
        if "side_to_act" in answer and answer.get("side_to_act") == "red":
            answer["options"] = options  # the snapshot after the move, as C6 sends it
        route.fulfill(status=200, content_type="application/json", body=json.dumps(answer))

    p.page.route(f"**/api/pages/{page_id}/actions", with_options)
    p.goto(f"/p/{page_id}#seat={token}")
    p.page.route(f"**/api/pages/{page_id}", with_options)
    p.page.evaluate(WATCH_TURNS)
    blue = min((s for s in snap["soldiers"] if s["side"] == "blue"), key=lambda s: s["x"])
    p.drag([(blue["x"], blue["y"]), (blue["x"] + 30, blue["y"]), (blue["x"] + 60, blue["y"])])  # off the edge
    p.idle()
    assert p.page.evaluate("window.__turnOptions") == [options]
    p.dismiss_handover()
    st = p.state()
    assert st["sideToAct"] == "red" and st["options"] == options
    assert p.page.locator("[data-action=send]").count() == 0
    assert [s["id"] for s in p.page.evaluate("window.dotfight.screen().aim.flickable()")] == [red[0]["id"]]
