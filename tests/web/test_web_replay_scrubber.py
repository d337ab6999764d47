"""Issue 21, item 11: the replay scrubber is drawn in the pen look (its own track and thumb in the
page's inks), not the browser's default blue slider."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from test_web_replay import play_some_page
from web_helpers import Phone

pytestmark = pytest.mark.browser

# Chromium's default slider blue (the accent of the filled track and the thumb) and the page's blue ink.
DEFAULT_BLUE = (0, 117, 255)
INK_BLUE = (29, 58, 158)


def _near(pixel: tuple[int, ...], colour: tuple[int, int, int], within: int = 40) -> bool:
    return all(abs(a - b) <= within for a, b in zip(pixel[:3], colour, strict=True))


def _count(png: bytes, colour: tuple[int, int, int]) -> int:
    with Image.open(io.BytesIO(png)) as image:
        rgb = image.convert("RGB")
        return sum(1 for px in rgb.get_flattened_data() if _near(px, colour))


def test_the_scrubber_is_in_the_pen_look(server: str, phone: Any, screens: Path) -> None:
    page_id, _ = play_some_page(server, flicks=4)
    p = Phone(phone, server)
    p.goto(f"/p/{page_id}#view=replay")
    scrub = p.page.locator(".scrub input[type=range]")
    style = scrub.evaluate(
        "(el) => { const s = getComputedStyle(el); "
        "return { appearance: s.appearance, webkit: s.webkitAppearance, "
        "at: el.style.getPropertyValue('--at'), height: el.getBoundingClientRect().height }; }"
    )
    assert style["appearance"] == "none" and style["webkit"] == "none", style
    # The moves replayed so far are inked over: at the end of the page, all of the line.
    assert style["at"] == "100%"
    assert style["height"] >= 44
    p.shot(screens, "issue21-11-replay-scrubber")
    at_end = scrub.screenshot()
    assert _count(at_end, DEFAULT_BLUE) == 0
    assert _count(at_end, INK_BLUE) > 50
    # Halfway back the line is half inked: less of the page's blue, still none of the browser's.
    p.page.evaluate(
        "(() => { const s = document.querySelector('.scrub input'); s.value = String(Math.floor(s.max / 2)); "
        "s.dispatchEvent(new Event('input')); })()"
    )
    p.idle()
    halfway = scrub.screenshot()
    assert _count(halfway, DEFAULT_BLUE) == 0
    assert 0 < _count(halfway, INK_BLUE) < _count(at_end, INK_BLUE)
    assert scrub.evaluate("(el) => el.style.getPropertyValue('--at')") != "100%"
    p.shot(screens, "issue21-11-replay-scrubber-halfway")
    assert p.errors == []
