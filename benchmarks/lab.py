"""The rules lab's speed: how long 1000 pages take at the lab's default bot, from a smaller sample.

    python3 benchmarks/lab.py [--preset quick] [--games 100] [--workers N] [--bot easy] [--full]

Plays `--games` pages (or the full 1000 with `--full`) with the lab's own runner on every core, prints
the seconds per page (wall clock, all workers together) and the extrapolated time for 1000 pages.
"""

from __future__ import annotations

import argparse
import time

from dotfight.lab import LabConfig, run_pages
from dotfight.lab.cli import DEFAULT_BOT
from dotfight.lab.runner import default_workers


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--preset", default="quick")
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--workers", type=int, default=default_workers())
    parser.add_argument("--bot", default=DEFAULT_BOT)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--full", action="store_true", help="play the whole 1000 pages")
    args = parser.parse_args()
    games = 1000 if args.full else args.games
    config = LabConfig(preset=args.preset, games=games, seed=args.seed, bot_blue=args.bot)
    started = time.perf_counter()
    records = run_pages(config, args.workers)
    elapsed = time.perf_counter() - started
    turns = sum(r.turns for r in records) / len(records)
    per_page = elapsed / games
    print(
        f"{games} {args.preset} pages, bot {args.bot}, {args.workers} worker(s): {elapsed:.1f} s "
        f"({per_page * 1000:.0f} ms per page, {turns:.1f} turns per page on average)"
    )
    print(
        f"1000 pages: {'measured' if args.full else 'extrapolated'} {per_page * 1000:.0f} s "
        f"({per_page * 1000 / 60:.1f} min; the target is 5 min)"
    )


if __name__ == "__main__":
    main()
