"""Issue 21, item 13 (Lighthouse's total blocking time on a page in play and a finished page): the first
draw of a page is spread over frames — the cached layer (paper, bases, ink) a few parts a frame, not
all of it in one — and the page, once settled, is the whole page all the same."""

from __future__ import annotations

from typing import Any

import pytest
from busy_page import busy_page
from web_helpers import Phone

pytestmark = pytest.mark.browser

# Counts, frame by frame, the strokes drawn on canvases other than the page's own (the cached layer).
COUNT_LAYER_STROKES = """
window.__layerStrokes = [0];
const raf = window.requestAnimationFrame.bind(window);
window.requestAnimationFrame = (cb) => raf((ts) => { window.__layerStrokes.push(0); cb(ts); });
const stroke = CanvasRenderingContext2D.prototype.stroke;
CanvasRenderingContext2D.prototype.stroke = function (...args) {
  if (!this.canvas.isConnected) window.__layerStrokes[window.__layerStrokes.length - 1] += 1;
  return stroke.apply(this, args);
};
"""


def test_a_long_pages_first_layer_is_drawn_over_several_frames(server: str, phone: Any) -> None:
    page_id, token = busy_page(server, lines=40)
    phone.add_init_script(COUNT_LAYER_STROKES)
    p = Phone(phone, server)
    p.goto(f"/p/{page_id}#seat={token}")
    per_frame = [n for n in p.page.evaluate("window.__layerStrokes") if n]
    total = sum(per_frame)
    # Forty lines of some twenty strokes each, the paper and the rings: no one frame drew most.
    assert total > 400
    assert len(per_frame) >= 5 and max(per_frame) < total / 4, per_frame
    st = p.state()
    assert st["inkCount"] >= 40 and p.page.evaluate("window.dotfight.screen().renderer.warmUp") == 0
    assert p.errors == []
