"""The link preview's card: the page and its score side by side, in the 1.91:1 shape chat apps show.

A shared link's preview (`summary_large_image`, Open Graph) is drawn 1.91:1 wide; the page itself is
portrait (700 × 980), so a chat app would crop it to a band across the middle. The card puts the whole
page, as `picture.py` draws it, on the left of a 1200 × 630 sheet, and on the right what the preview's
words say: the title, the size and way of playing, the soldiers standing on each side and the lines of
ink. "Share the page" keeps the whole-page picture; only the preview uses the card.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from dotfight.engine import State
from dotfight.server.picture import INK, page_svg

# Bumped whenever the card's layout changes (the page drawn in it has its own PICTURE_FORMAT).
CARD_FORMAT = 1
CARD_SIZE = (1200, 630)
DESK = "#e9e2d0"
PENCIL = "#2b2b33"
MUTED = "#6b6659"
MARGIN = 24
# The page's box on the left: the card's height less the margins, a preset page's shape (700 × 980).
PAGE_BOX = (432, CARD_SIZE[1] - 2 * MARGIN)
FONT = "DejaVu Sans, Liberation Sans, Noto Sans, sans-serif"


@dataclass(frozen=True)
class CardWords:
    """What the card says beside the page: a heading, the page's kind, and the standing sides."""

    heading: str
    kind: str
    blue: int
    red: int
    lines: int


def card_words(state: State, heading: str, kind: str) -> CardWords:
    """Counts what the card shows of a state: soldiers standing on each side and lines of ink.

    >>> from dotfight.engine import RuleSet, apply, new_page
    >>> state, _ = apply(new_page(RuleSet.preset("quick"), seed=7), "blue", {"type": "quick_setup"})
    >>> card_words(state, "A page being set up", "Quick · on one phone")
    CardWords(heading='A page being set up', kind='Quick · on one phone', blue=24, red=24, lines=0)
    """
    standing = {side: sum(s.side == side and s.alive for s in state.soldiers) for side in ("blue", "red")}
    return CardWords(heading, kind, standing["blue"], standing["red"], len(state.ink))


def _nested_page(page: str, x: float, y: float, width: float, height: float) -> str:
    """The page's own SVG document placed in a box of the card (its viewBox kept, its shape fitted)."""
    root = re.match(r"<svg\b[^>]*>", page)
    if root is None:
        raise ValueError("the page picture is not an SVG document")
    view_box = re.search(r'viewBox="([^"]*)"', root.group(0))
    view = f' viewBox="{view_box.group(1)}"' if view_box else ""
    tag = (
        f'<svg x="{x:.0f}" y="{y:.0f}" width="{width:.0f}" height="{height:.0f}"{view} '
        'preserveAspectRatio="xMidYMid meet">'
    )
    return tag + page[root.end() :]


def _text(x: float, y: float, size: float, colour: str, words: str, weight: str = "normal") -> str:
    return (
        f'<text x="{x:.0f}" y="{y:.0f}" font-family="{FONT}" font-size="{size:.0f}" font-weight="{weight}" '
        f'fill="{colour}">{html.escape(words)}</text>'
    )


def card_svg(state: State, page_id: str, words: CardWords, *, max_bytes: int | None = None) -> str:
    """Draws the preview card of a page in this state: the whole page left, its score right (with
    `max_bytes`, the page inside it is bounded as `page_svg` bounds it).

    >>> from dotfight.engine import RuleSet, apply, new_page
    >>> state, _ = apply(new_page(RuleSet.preset("quick"), seed=7), "blue", {"type": "quick_setup"})
    >>> svg = card_svg(state, "demo", card_words(state, "A page being set up", "Quick · on one phone"))
    >>> svg.startswith('<svg xmlns="http://www.w3.org/2000/svg" width="1200" height="630"')
    True
    >>> svg.count("<ellipse"), "24 standing" in svg
    (48, True)
    """
    width, height = CARD_SIZE
    box_w, box_h = PAGE_BOX
    page = _nested_page(page_svg(state, page_id, max_bytes=max_bytes), MARGIN, MARGIN, box_w, box_h)
    left = MARGIN * 2 + box_w + 24
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}">',
        f'<rect width="{width}" height="{height}" fill="{DESK}"/>',
        page,
        _text(left, 112, 64, INK["blue"], "Dotfight", "bold"),
        _text(left, 190, 44, PENCIL, words.heading, "bold"),
        _text(left, 246, 32, MUTED, words.kind),
        _text(left, 350, 52, INK["blue"], f"blue {words.blue} standing", "bold"),
        _text(left, 420, 52, INK["red"], f"red {words.red} standing", "bold"),
        _text(left, 500, 32, MUTED, f"{words.lines} line{'' if words.lines == 1 else 's'} of ink"),
        _text(left, 572, 26, MUTED, "the pen-and-paper war game"),
        "</svg>",
    ]
    return "\n".join(parts) + "\n"
