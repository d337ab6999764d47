"""What runs inside the picture worker processes: a page's SVG (gzipped) and PNG, drawn by value.

A drawing's work is bounded whatever the rules (`picture.py`), but a long page's PNG still takes most of
a second of CPU in cairosvg's Python parser: done here, it never holds the server's GIL or event loop,
and its time budget can be enforced by ending the process (`workers.WorkerPool`). The workers run at a
lower priority than the server (`WORKER_NICENESS`), so pictures never take a core from the moves.
"""

from __future__ import annotations

import gzip
import multiprocessing
import os
from dataclasses import dataclass

from dotfight.engine import State
from dotfight.server.card import CARD_SIZE, CardWords, card_svg
from dotfight.server.picture import page_svg, png_size, svg_to_png

# Added to the worker's niceness once, at its first drawing (workers fork from a forkserver the bot and
# the engine share, so the forkserver itself keeps the server's priority). The lowest priority there is:
# beside a busy server thread the kernel gives a niceness-19 process about 1.5 % of a core (10 gave it
# about 10 %), and a picture can always wait a little longer than a move. At 10, eight clients drawing
# all along on a slow shared machine took the server's p99 snapshot from 17 ms (idle) to 61 ms.
WORKER_NICENESS = 19
_niced = False


@dataclass(frozen=True)
class Drawn:
    """A page's pictures at one version: the SVG gzipped (as it is sent), and the PNG when asked."""

    svg_gzip: bytes
    png: bytes | None


def _lower_priority() -> None:
    global _niced
    # Only in a worker: called in the server's own process (or a test's), it would slow it for good.
    if not _niced and multiprocessing.parent_process() is not None:
        os.nice(WORKER_NICENESS)
        _niced = True


def draw_by_value(state: State, page_id: str, with_png: bool, max_bytes: int) -> Drawn:
    """Draws the page's SVG (at most `max_bytes`, else PictureTooLarge) and, `with_png`, its PNG
    (PictureUnavailable without a rasteriser).

    >>> from dotfight.engine import RuleSet, new_page
    >>> drawn = draw_by_value(new_page(RuleSet.preset("quick"), seed=7), "demo", False, 1_000_000)
    >>> gzip.decompress(drawn.svg_gzip).startswith(b"<svg"), drawn.png
    (True, None)
    """
    _lower_priority()
    svg = page_svg(state, page_id, max_bytes=max_bytes)
    # mtime=0: the same page at the same version is the same bytes, gzipped too.
    svg_gzip = gzip.compress(svg.encode("utf-8"), compresslevel=6, mtime=0)
    png = svg_to_png(svg, png_size(state.rules)) if with_png else None
    return Drawn(svg_gzip, png)


def draw_card_by_value(state: State, page_id: str, words: CardWords, max_bytes: int) -> bytes:
    """Draws the page's link-preview card (`card.py`) as a PNG, its page within `max_bytes` as
    `draw_by_value` bounds it (PictureUnavailable without a rasteriser)."""
    _lower_priority()
    return svg_to_png(card_svg(state, page_id, words, max_bytes=max_bytes), CARD_SIZE)
