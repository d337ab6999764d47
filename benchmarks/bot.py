"""Dawood-bot's thinking time: median and p90 per decision, for each strength.

    python3 benchmarks/bot.py [--preset classic] [--pages 3] [--strengths easy normal hard]

Each measured bot plays blue against an easy red on a few seeded pages; every decision it makes in play
(flicks, sends, stops) is timed. Setup decisions are listed apart (they are few and cheap).
"""

from __future__ import annotations

import argparse
import statistics
import time

from dotfight.bot import STRENGTHS, DawoodBot
from dotfight.engine import RuleSet, apply, new_page


def time_decisions(strength: str, preset: str, pages: int) -> tuple[list[float], list[float]]:
    """Seconds per play decision and per setup decision of `strength` playing blue."""
    play: list[float] = []
    setup: list[float] = []
    rules = RuleSet.preset(preset)
    for page in range(pages):
        bots = {"blue": DawoodBot(strength, seed=page), "red": DawoodBot("easy", seed=1000 + page)}
        state = new_page(rules, 7919 * (page + 1))
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


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--preset", default="classic")
    parser.add_argument("--pages", type=int, default=3)
    parser.add_argument("--strengths", nargs="+", default=list(STRENGTHS), choices=list(STRENGTHS))
    args = parser.parse_args()
    print(f"preset {args.preset}, {args.pages} page(s) per strength, blue measured against an easy red")
    header = f"{'strength':<8} {'decisions':>9} {'median ms':>10} {'p90 ms':>8} {'max ms':>8}"
    print(f"{header} {'setup median ms':>16}")
    for strength in args.strengths:
        play, setup = time_decisions(strength, args.preset, args.pages)
        print(
            f"{strength:<8} {len(play):>9} {1000 * statistics.median(play):>10.1f} {1000 * p90(play):>8.1f}"
            f" {1000 * max(play):>8.1f} {1000 * statistics.median(setup):>16.1f}"
        )


if __name__ == "__main__":
    main()
