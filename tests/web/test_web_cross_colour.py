"""Issue 20, item 5: the browser asks whose cross it is. The cross's colour on a real played page is the
side its `crossed_out` event names (the server's word), drawn so; a cross whose event names a side is
that side whatever the old rule would say; and model.js no longer works the colour out."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from busy_page import busy_page
from web_helpers import Phone

pytestmark = pytest.mark.browser

WEB = Path(__file__).resolve().parents[2] / "web" / "js"

# For each crossed soldier [x, y]: the ink's hue on the ring his cross's arms reach through (1.3 to
# 2.3 dot radii; his own faint dot is within 1), away from every line of ink and every other soldier,
# so only the cross is read: the count of inked pixels bluer than red, and redder than blue.
CROSS_HUE = """([crosses, lines, others, dot]) => {
  const c = document.querySelector('.stage canvas');
  const ctx = c.getContext('2d');
  const rect = c.getBoundingClientRect();
  const k = c.width / rect.width;
  const units = (rect.width / window.dotfight.screen().renderer.rules.page_width) * k;
  const nearSegment = (px, py, a, b, d) => {
    const vx = b[0] - a[0], vy = b[1] - a[1];
    const t = Math.max(0, Math.min(1, ((px - a[0]) * vx + (py - a[1]) * vy) / (vx * vx + vy * vy || 1)));
    return Math.hypot(px - a[0] - t * vx, py - a[1] - t * vy) < d;
  };
  const nearInk = (px, py) =>
    lines.some((pts) => pts.some((p, i) => i > 0 && nearSegment(px, py, pts[i - 1], p, 7)));
  const nearOther = (px, py, x, y) =>
    others.some(([ox, oy]) => (ox !== x || oy !== y) && Math.hypot(px - ox, py - oy) < 3 * dot);
  return crosses.map(([x, y]) => {
    const at = window.dotfight.toPage(x, y);
    const cx = (at.x - rect.left) * k, cy = (at.y - rect.top) * k;
    const R = Math.ceil(2.3 * dot * units) + 1;
    const d = ctx.getImageData(Math.round(cx) - R, Math.round(cy) - R, 2 * R + 1, 2 * R + 1).data;
    let blue = 0, red = 0;
    for (let j = 0; j <= 2 * R; j++) for (let i = 0; i <= 2 * R; i++) {
      const ux = (Math.round(cx) - R + i - cx) / units, uy = (Math.round(cy) - R + j - cy) / units;
      const dist = Math.hypot(ux, uy);
      if (dist < 1.3 * dot || dist > 2.3 * dot) continue;
      // The page is turned for red: a screen offset is the page's turned back.
      const flip = window.dotfight.state().view.flip ? -1 : 1;
      const px = x + flip * ux, py = y + flip * uy;
      if (nearInk(px, py) || nearOther(px, py, x, y)) continue;
      const o = 4 * (j * (2 * R + 1) + i);
      if (d[o] + d[o + 1] + d[o + 2] > 251 + 246 + 233 - 60) continue;  // paper, or nearly
      if (d[o + 2] > d[o]) blue += 1; else red += 1;
    }
    return [blue, red];
  });
}"""


def test_the_cross_is_drawn_in_the_side_its_event_names(server: str, phone: Any) -> None:
    page_id, token = busy_page(server, lines=14)
    log = httpx.get(f"{server}/api/pages/{page_id}/log", timeout=10).json()
    named = {
        event["soldier"]: event["side"]
        for entry in log["entries"]
        for event in entry["events"]
        if event["type"] == "crossed_out"
    }
    assert len(named) >= 4
    snap = httpx.get(f"{server}/api/pages/{page_id}", timeout=10).json()
    p = Phone(phone, server)
    p.goto(f"/p/{page_id}#seat={token}")
    st = p.state()
    crossed = [s for s in st["soldiers"] if not s["alive"]]
    assert {s["id"]: s["cross"]["side"] for s in crossed} == named

    lines = [ink["points"] for ink in snap["ink"]]
    everyone = [[s["x"], s["y"]] for s in st["soldiers"]]
    hues = p.page.evaluate(CROSS_HUE, [[[s["x"], s["y"]] for s in crossed], lines, everyone, 7.0])
    read = [
        ("blue" if blue > red else "red", named[s["id"]])
        for s, (blue, red) in zip(crossed, hues, strict=True)
        if blue + red >= 4 and max(blue, red) >= 3 * min(blue, red)
    ]
    assert len(read) >= 2, hues
    assert all(drawn == event for drawn, event in read), read
    assert not p.errors


def test_a_cross_is_the_side_its_event_names_not_one_worked_out(server: str, phone: Any) -> None:
    page = phone.new_page()
    page.goto(server + "/")
    got = page.evaluate(
        """async () => {
  const { applyEvent, blankModel } = await import('/js/model.js');
  const model = blankModel({});
  model.soldiers.set('b1s1', { id: 'b1s1', side: 'blue', x: 0, y: 0, alive: true });
  model.soldiers.set('b2s1', { id: 'b2s1', side: 'red', x: 9, y: 9, alive: true });
  // A blue shooter's victim whose event names red: the old rule (the killer's side) said blue.
  const cross = (soldier, by, cause, side) =>
    applyEvent(model, { type: 'crossed_out', soldier, at: [0, 0], by, cause, side });
  cross('b2s1', 'b1s1', 'snipe', 'red');
  cross('b1s1', 'garrison', 'shot', 'blue');
  return [model.soldiers.get('b2s1').cross.side, model.soldiers.get('b1s1').cross.side];
}"""
    )
    assert got == ["red", "blue"]


def test_the_browser_keeps_no_rule_for_the_cross_the_turn_the_zones_or_the_half() -> None:
    model = (WEB / "model.js").read_text()
    controls = (WEB / "controls.js").read_text()
    render = (WEB / "render.js").read_text()
    crossed_case = model.split('case "crossed_out"')[1].split("case ")[0]
    assert "crossSide" not in model and "garrison" not in model
    assert "otherSide(" not in crossed_case and "by)" not in crossed_case and "ev.side" in crossed_case
    # The turn's number is the event's, not counted up here.
    assert not re.search(r"number:\s*\(", model) and "ev.number" in model
    assert "outside_margin" not in controls
    assert not re.search(r"page_height\s*/\s*2", render)
