"""`dotfight lab`: let bots play many pages under some rules and report what the numbers do.

    dotfight lab --preset quick --games 1000 --seed 7 --bot normal --set wall_loss_full=0.7 \
        --json out.json --plot out.png --workers 2 --bot-red hard
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from dotfight.bot import STRENGTHS
from dotfight.engine import EngineError
from dotfight.engine.rules import PRESET_NAMES
from dotfight.lab.config import DEFAULT_TURN_CAP, LabConfig
from dotfight.lab.report import build_report
from dotfight.lab.runner import default_workers, run_pages
from dotfight.lab.table import print_report

# The lab's default bot: the fastest strength, so 1000 Quick pages take minutes, not hours.
DEFAULT_BOT = "easy"


def parse_override(text: str) -> tuple[str, Any]:
    """Reads one `--set name=value`; the value is a JSON number when it looks like one."""
    name, sep, raw = text.partition("=")
    if not sep or not name.strip() or not raw.strip():
        raise argparse.ArgumentTypeError(f"expected name=value, got {text!r}")
    value: Any = raw.strip()
    with contextlib.suppress(json.JSONDecodeError):
        value = json.loads(value)
    return name.strip(), value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Registers the lab's options."""
    parser.add_argument(
        "--preset", default="classic", choices=PRESET_NAMES, help="rule preset (default classic)"
    )
    parser.add_argument("--games", type=int, default=100, help="pages to play (default 100)")
    parser.add_argument("--seed", type=int, default=0, help="run seed; page i depends on (seed, i) only")
    parser.add_argument(
        "--bot",
        default=DEFAULT_BOT,
        choices=list(STRENGTHS),
        help=f"strength of both bots, or of blue with --bot-red (default {DEFAULT_BOT})",
    )
    parser.add_argument("--bot-red", default=None, choices=list(STRENGTHS), help="strength of the red bot")
    parser.add_argument(
        "--alternate",
        action="store_true",
        help="the two bots swap colours on every odd page (fair strength comparisons)",
    )
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        type=parse_override,
        default=[],
        metavar="NAME=VALUE",
        help="override a rule parameter (repeatable)",
    )
    parser.add_argument(
        "--turn-cap",
        type=int,
        default=DEFAULT_TURN_CAP,
        help=f"turns after which a page is stopped as a stalemate (default {DEFAULT_TURN_CAP})",
    )
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default: one per core)")
    parser.add_argument("--json", dest="json_path", default=None, help="write the report as JSON here")
    parser.add_argument("--plot", dest="plot_path", default=None, help="draw the distributions to this PNG")
    parser.add_argument("--quiet", action="store_true", help="no progress bar and no table")


def run(args: argparse.Namespace) -> int:
    """Plays the run, prints the table, writes the JSON and the picture; returns the exit status."""
    err = Console(stderr=True)
    try:
        config = LabConfig(
            preset=args.preset,
            overrides=dict(args.overrides),
            games=args.games,
            seed=args.seed,
            bot_blue=args.bot,
            bot_red=args.bot_red,
            alternate=args.alternate,
            turn_cap=args.turn_cap,
        )
    except (EngineError, ValueError) as exc:
        code = getattr(exc, "code", "bad_request")
        err.print(f"[red]lab: {code}: {exc}[/red]")
        return 2
    workers = args.workers if args.workers is not None else default_workers()
    started = time.perf_counter()
    if args.quiet:
        records = run_pages(config, workers)
    else:
        columns = (
            TextColumn("pages"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
        )
        with Progress(*columns, console=err) as progress:
            task = progress.add_task("pages", total=config.games)
            records = run_pages(config, workers, lambda done: progress.advance(task, done))
    elapsed = time.perf_counter() - started
    report = build_report(config, records)
    if not args.quiet:
        print_report(report, Console())
        err.print(f"{config.games} pages in {elapsed:.1f} s on {workers} worker(s)")
    if args.json_path:
        with open(args.json_path, "w", encoding="utf-8") as out:
            json.dump(report, out, indent=2, sort_keys=True, allow_nan=False)
            out.write("\n")
    if args.plot_path:
        from dotfight.lab.plot import draw_report

        draw_report(report, records, args.plot_path)
    return 0


if __name__ == "__main__":  # pragma: no cover - `dotfight lab` is the entry point
    parser = argparse.ArgumentParser(prog="dotfight lab")
    add_arguments(parser)
    sys.exit(run(parser.parse_args()))
