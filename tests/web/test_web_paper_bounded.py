"""Issue 18, item 1 (the app's side): web/js/paper.js draws any page's paper and strokes with bounded
work (its ruled-lines loop is the one that drew 2.6 × 10¹² lines on the server), and a preset's page
exactly as before: its rules at the exercise book's spacing, its strokes sampled every 5 units."""

from __future__ import annotations

import math
from typing import Any

import pytest

pytestmark = pytest.mark.browser

# Each drawing on a counting context; answers, per drawing, the heights of the ruled lines (every moveTo
# to the left edge but the margin's, whose y is 0), how many lines were drawn, and how long it took.
DRAW = """async (drawings) => {
  const paper = await import('/js/paper.js');
  return drawings.map(([name, ...args]) => {
    const ruled = [];
    let lineTos = 0;
    const ctx = new Proxy({}, {
      get: (_, method) => (...at) => {
        if (method === 'lineTo') lineTos++;
        if (method === 'moveTo' && at[0] === 0 && at[1] > 0 && ruled.length < 100000) ruled.push(at[1]);
      },
      set: () => true,
    });
    const started = performance.now();
    paper[name](ctx, ...args);
    return { ruled, lineTos, ms: performance.now() - started };
  });
}"""


def book_rules(width: float, height: float) -> list[float]:
    """The rules' heights as paper.js drew them before issue 18 (a 26th of the width apart)."""
    gap, y, found = width / 26, width / 26 * 2.5, []
    while y < height:
        found.append(y)
        y += gap
    return found


def test_a_presets_paper_is_ruled_as_before_and_any_page_with_bounded_work(server: str, phone: Any) -> None:
    page = phone.new_page()
    page.goto(server + "/")
    ordinary = [(1000, 1400), (600, 900), (3000, 60_000)]  # the last: the longest a new page may be
    for (width, height), drawn in zip(
        ordinary, page.evaluate(DRAW, [["drawPaper", *size] for size in ordinary]), strict=True
    ):
        assert drawn["ruled"] == book_rules(width, height)
    # One at a time, mildest first: before the bound, the second was 2.6 × 10¹² lines.
    for width, height in [(1, 100_000), (1e-6, 100_000), (1e-300, 100_000), (100_000, 1e-6)]:
        (drawn,) = page.evaluate(DRAW, [["drawPaper", width, height]])
        lines = drawn["ruled"]
        assert drawn["lineTos"] <= 520 + 1 and all(0 < y < height for y in lines), (
            width,
            height,
            drawn["lineTos"],
        )
        assert drawn["ms"] < 200, (width, height, drawn["ms"])


def test_strokes_and_rings_are_sampled_every_5_units_up_to_a_bound(server: str, phone: Any) -> None:
    page = phone.new_page()
    page.goto(server + "/")
    style = {"color": "#1d3a9e", "seed": 7}
    drawings = [
        ["penStroke", [[10, 10], [990, 1390]], style],  # a preset's diagonal
        ["penStroke", [[0, 0], [100_000, 100_000]], style],  # the largest page's
        ["handCircle", 500, 700, 70, style],
        ["handCircle", 50_000, 50_000, 50_000, style],
    ]
    diagonal, long_line, ring, huge_ring = (drawn["lineTos"] for drawn in page.evaluate(DRAW, drawings))
    assert diagonal == math.ceil(math.hypot(980, 1380) / 5)  # every 5 units, as before
    assert 1000 <= long_line <= 1024 + 1
    ring_steps = math.ceil(70 * (2 * math.pi + 0.4) / 5)  # a step about every 5 units, each resampled
    assert ring_steps <= ring <= 2 * ring_steps
    assert huge_ring <= 2 * 1024
