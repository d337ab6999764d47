"""Issue 21's work per frame: the loupe shown while aiming is drawn again, magnified, from the cached
layer and what moves — never by copying the page's canvas onto itself, which made each aiming frame
rasterise and copy its whole bitmap (most of `benchmarks/web.py`'s p95) — and it still shows, 2.5
times larger, what the thumb covers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from web_helpers import Phone, aim_at_nearest_enemy, flick_path, page_ready_to_flick

pytestmark = pytest.mark.browser

# Counts the canvas's draws of itself (drawImage with the page's canvas as the source) from now on.
WATCH_SELF_COPIES = """() => {
  const canvas = document.querySelector('.stage canvas');
  const proto = CanvasRenderingContext2D.prototype;
  const original = proto.drawImage;
  window.__selfCopies = 0;
  proto.drawImage = function (source, ...rest) {
    if (source === canvas && this.canvas === canvas) window.__selfCopies += 1;
    return original.call(this, source, ...rest);
  };
}"""


def test_the_loupe_is_drawn_magnified_not_copied_from_the_canvas(
    server: str, phone: Any, screens: Path
) -> None:
    page_id, token = page_ready_to_flick(server)
    p = Phone(phone, server)
    p.goto(f"/p/{page_id}#seat={token}")
    soldier, direction = aim_at_nearest_enemy(p.state())
    p.page.evaluate(WATCH_SELF_COPIES)
    # Pulled back a short way: the thumb (and the loupe's centre) is near the soldier, on his dot.
    p.drag(flick_path(soldier, direction, 14), release=False)
    p.page.evaluate("new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    loupe = p.page.evaluate("window.dotfight.screen().state.overlay.loupe")
    assert loupe is not None
    p.shot(screens, "loupe-magnified")
    assert p.page.evaluate("window.__selfCopies") == 0
    p.touch("touchEnd")
    p.idle()
    assert not p.errors
