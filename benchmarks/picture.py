"""The page as a picture and the turn options on the wire: what they cost the server.

Run from the repository root: `python3 benchmarks/picture.py [--rounds 5]`. Pages: the golden picture
page (tests/server/golden, a finished Quick page) and the four engine golden pages (tests/engine/golden),
each replayed from its log. Prints, per page, the SVG's size (plain and gzipped) and the PNG's, and the
median time to draw the SVG (`page_svg`) and to rasterise the PNG (`svg_to_png`); then the cost of C6 —
`turn_options` after every action in play — against `apply` of the same actions, measured in
interleaved rounds of the same run, as a ratio.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dotfight.engine import Replay, RuleSet, apply, turn_options  # noqa: E402
from dotfight.server.picture import page_svg, png_size, svg_to_png  # noqa: E402


@dataclass(frozen=True)
class Page:
    name: str
    page_id: str
    actions: list[dict[str, Any]]
    replay: Replay


def golden_pages() -> list[Page]:
    """Every golden page, replayed from its log."""
    logs = [("picture", ROOT / "tests/server/golden/picture_page.json")]
    logs += [(path.stem, path) for path in sorted((ROOT / "tests/engine/golden").glob("*.json"))]
    pages = []
    for name, path in logs:
        log = json.loads(path.read_text())
        replay = Replay(RuleSet.from_json(log["rules"]), int(log["seed"], 16), log["actions"])
        pages.append(Page(name, log.get("page_id", f"golden-{name}"), log["actions"], replay))
    return pages


def median_seconds(work: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description="the page as a picture and turn options: costs")
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    pages = golden_pages()
    print(f"{'page':8} {'lines':>5} {'svg KB':>7} {'gz KB':>6} {'png KB':>7} {'svg ms':>7} {'png ms':>7}")
    for page in pages:
        state = page.replay.state
        svg = page_svg(state, page.page_id)
        png = svg_to_png(svg, png_size(state.rules))
        svg_s = median_seconds(lambda state=state, page=page: page_svg(state, page.page_id), rounds)
        png_s = median_seconds(lambda svg=svg, state=state: svg_to_png(svg, png_size(state.rules)), rounds)
        zipped = len(gzip.compress(svg.encode()))
        print(
            f"{page.name:8} {len(state.ink):5} {len(svg) / 1024:7.0f} {zipped / 1024:6.0f}"
            f" {len(png) / 1024:7.0f} {svg_s * 1000:7.1f} {png_s * 1000:7.1f}"
        )

    # C6: turn_options after each action in play, against apply of the same actions (interleaved rounds).
    steps = [
        (page.replay.states(index), entry["side"], entry["action"], page.replay.states(index + 1))
        for page in pages
        for index, entry in enumerate(page.actions[: page.replay.valid])
        if page.replay.states(index + 1).phase == "play"
    ]
    applies, options = [], []
    for _ in range(rounds):
        start = time.perf_counter()
        for before, side, action, _ in steps:
            apply(before, side, action)
        applies.append((time.perf_counter() - start) / len(steps))
        start = time.perf_counter()
        for _, _, _, after in steps:
            turn_options(after)
        options.append((time.perf_counter() - start) / len(steps))
    apply_us, options_us = statistics.median(applies) * 1e6, statistics.median(options) * 1e6
    print(
        f"\nC6 over {len(steps)} actions in play: apply {apply_us:.0f} µs, turn_options {options_us:.0f} µs"
        f" (turn_options / apply = {options_us / apply_us:.2f})"
    )


if __name__ == "__main__":
    main()
