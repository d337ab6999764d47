"""Dawood-bot's thinking time: median and p90 per decision, for each strength, on each preset.

    python3 benchmarks/bot.py [--presets quick classic dawood] [--pages 2] [--strengths easy normal hard]
                              [--baseline-module oldbot]

Each measured bot plays blue against an easy red on a few seeded pages; every decision it makes in play
(flicks, sends, stops) is timed. Setup decisions are listed apart (they are few and cheap). With
`--baseline-module` (an importable copy of an older `dotfight.bot`, e.g. made by
`git archive <ref> dotfight/bot` with its imports renamed), the baseline is measured in the same run,
page by page interleaved with the current bot, and the ratio of medians is printed.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import time
from typing import Any

from dotfight.bot import STRENGTHS
from dotfight.engine import RuleSet, apply, new_page


def time_page(bot_class: Any, strength: str, preset: str, page: int) -> tuple[list[float], list[float]]:
    """Seconds per play decision and per setup decision of `strength` playing blue on one page."""
    play: list[float] = []
    setup: list[float] = []
    bots = {"blue": bot_class(strength, seed=page), "red": bot_class("easy", seed=1000 + page)}
    state = new_page(RuleSet.preset(preset), 7919 * (page + 1))
    while state.actor is not None:
        side = state.actor
        started = time.perf_counter()
        action = bots[side].choose(state)
        spent = time.perf_counter() - started
        if side == "blue":
            (play if state.phase == "play" else setup).append(spent)
        state, _ = apply(state, side, action)
    return play, setup


def p90(values: list[float]) -> float:
    """The 90th percentile (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]


def row(label: str, play: list[float], setup: list[float]) -> str:
    """One line of the table."""
    return (
        f"{label:<16} {len(play):>9} {1000 * statistics.median(play):>10.1f} {1000 * p90(play):>8.1f}"
        f" {1000 * max(play):>8.1f} {1000 * statistics.median(setup):>16.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--presets", nargs="+", default=["quick", "classic", "dawood"])
    parser.add_argument("--pages", type=int, default=2)
    parser.add_argument("--strengths", nargs="+", default=list(STRENGTHS), choices=list(STRENGTHS))
    parser.add_argument("--baseline-module", default=None, help="an older bot package to compare with")
    args = parser.parse_args()
    bots: dict[str, Any] = {"current": importlib.import_module("dotfight.bot").DawoodBot}
    if args.baseline_module:
        bots["baseline"] = importlib.import_module(args.baseline_module).DawoodBot
    print(f"{args.pages} page(s) per strength and preset, blue measured against an easy red")
    header = f"{'strength':<16} {'decisions':>9} {'median ms':>10} {'p90 ms':>8} {'max ms':>8}"
    for preset in args.presets:
        print(f"\npreset {preset}\n{header} {'setup median ms':>16}")
        for strength in args.strengths:
            times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in bots}
            for page in range(args.pages):
                for name, bot_class in bots.items():  # interleaved, page by page
                    play, setup = time_page(bot_class, strength, preset, page)
                    times[name][0].extend(play)
                    times[name][1].extend(setup)
            for name in bots:
                print(row(f"{strength} {name}" if len(bots) > 1 else strength, *times[name]))
            if len(bots) > 1:
                ratio = statistics.median(times["current"][0]) / statistics.median(times["baseline"][0])
                print(f"{'':<16} current/baseline median: {ratio:.2f}")


if __name__ == "__main__":
    main()
