"""The work per frame (issue 21's check, benchmarks/web.py): when a turn ends, the lines it leaves
behind are faded by redrawing the cached layer in a task of its own once the page is still, never
inside an animation frame; the layer is up to date once the page has settled."""

from __future__ import annotations

from typing import Any

import pytest
from busy_page import busy_page
from web_helpers import Phone, aim_at_nearest_enemy, flick_path

pytestmark = pytest.mark.browser

# Records, for every redraw of the cached layer from scratch (its desk-coloured fill), whether it ran
# inside an animation frame's callback.
WATCH_LAYER = """() => {
  const r = window.dotfight.screen().renderer;
  const rebuilds = (window.__rebuilds = []);
  let inFrame = false;
  const raf = window.requestAnimationFrame.bind(window);
  window.requestAnimationFrame = (cb) => raf((ts) => {
    inFrame = true;
    try { cb(ts); } finally { inFrame = false; }
  });
  const fill = r.layerCtx.fillRect.bind(r.layerCtx);
  r.layerCtx.fillRect = (...args) => {
    if (r.layerCtx.fillStyle === '#e9e2d0') rebuilds.push(inFrame);
    return fill(...args);
  };
}"""
LAYER_NOW = """() => {
  const r = window.dotfight.screen().renderer;
  const ink = r.state.model.ink;
  let from = ink.length;
  while (from > 0 && ink[from - 1].side === ink[ink.length - 1].side) from--;
  return { layerRecent: r.layerRecent, lastTurnFrom: from, rebuilds: window.__rebuilds };
}"""


def test_a_turns_end_fades_its_lines_off_the_animation_frames(server: str, phone: Any) -> None:
    page_id, token = busy_page(server, lines=20)
    p = Phone(phone, server)
    p.goto(f"/p/{page_id}#seat={token}")
    p.dismiss_handover()
    p.page.evaluate(WATCH_LAYER)
    st = p.state()
    before = st["inkCount"]
    soldier, direction = aim_at_nearest_enemy(st)
    p.drag(flick_path(soldier, direction, 200))
    p.page.wait_for_function(f"window.dotfight.state().inkCount > {before}")
    p.idle()
    p.page.wait_for_timeout(100)
    now = p.page.evaluate(LAYER_NOW)
    # The new line began a new turn: the old last turn's lines were faded, once, off the frames.
    assert now["layerRecent"] == now["lastTurnFrom"] == before
    assert now["rebuilds"] == [False]
    assert p.errors == []
