"""`dotfight lab`: let bots play many pages under some rules and report what the numbers do.

    dotfight lab --preset quick --games 1000 --seed 7 --bot normal --set wall_loss_full=0.7 \
        --json out.json --plot out.png --workers 2 --bot-red hard
    dotfight lab --preset quick --bot normal --red-policy snipe-only --alternate --games 200
    dotfight lab sweep --preset quick --param wildness=0.02:0.2:8 --bot normal --games 200 \
        --plot out.png --json out.json [--cluster tcp://host:8786]
    dotfight lab ladder --preset quick --games 200 --json ladder.json --plot ladder.png
    dotfight lab calibrate --target book.json --trials 30 --bot normal --alternate --seed 2026 \
        --study calibrate.sqlite3 --json out.json --plot out.png [--free wall_loss_full=0.7:0.95]
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import sys
import time
from collections.abc import Callable, Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from dotfight.bot import STRENGTHS
from dotfight.engine import EngineError, RuleSet
from dotfight.engine.rules import PRESET_NAMES
from dotfight.lab.config import (
    DEFAULT_TURN_CAP,
    FULL_POLICY,
    KNOWN_PLAYERS,
    KNOWN_POLICIES,
    REFERENCE_PLAYERS,
    LabConfig,
)
from dotfight.lab.ladder import ANCHOR, Ladder, build_ladder_report, run_ladder
from dotfight.lab.ladder_table import ladder_tables
from dotfight.lab.progress import PlainProgress
from dotfight.lab.report import build_report
from dotfight.lab.runner import ClusterError, default_workers, run_lab
from dotfight.lab.runner import Progress as Tick
from dotfight.lab.sweep import Param, Sweep, run_sweep, write_json
from dotfight.lab.table import print_report, sweep_table

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
        "mode",
        nargs="?",
        choices=("sweep", "ladder", "calibrate"),
        help="`sweep`: play the run at every value of --param (one, or two for a grid); `ladder`: a "
        "round robin of every strength and the reference players, one rating each; `calibrate`: fit the "
        "calibratable numbers to --target",
    )
    parser.add_argument(
        "--preset", default="classic", choices=PRESET_NAMES, help="rule preset (default classic)"
    )
    parser.add_argument("--games", type=int, default=100, help="pages to play (default 100)")
    parser.add_argument("--seed", type=int, default=0, help="run seed; page i depends on (seed, i) only")
    parser.add_argument(
        "--bot",
        default=DEFAULT_BOT,
        choices=list(KNOWN_PLAYERS),
        help=f"strength of both bots, or of blue with --bot-red (default {DEFAULT_BOT})",
    )
    parser.add_argument(
        "--bot-red", default=None, choices=list(KNOWN_PLAYERS), help="strength of the red bot"
    )
    for side in ("blue", "red"):
        parser.add_argument(
            f"--{side}-policy",
            default=FULL_POLICY,
            choices=list(KNOWN_POLICIES),
            help=f"what the {side} bot may do (default {FULL_POLICY}; snipe-only never lunges, "
            "no-outside keeps every man inside a base)",
        )
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
    parser.add_argument(
        "--no-twins",
        dest="twins",
        action="store_false",
        help="skip the twin pages with free walls (no walls/free-walls length ratio; half the work)",
    )
    parser.add_argument(
        "--param",
        dest="params",
        action="append",
        default=[],
        metavar="NAME=START:STOP:COUNT",
        help="sweep only: a rule parameter and its values (or NAME=A,B,C); twice for a grid",
    )
    parser.add_argument(
        "--state",
        default=None,
        help="sweep only: the file of finished pages a rerun continues from (default: the JSON's name "
        "+ .pages.jsonl)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar and no table")
    add_ladder_arguments(parser)
    parser.add_argument(
        "--cluster",
        default=None,
        metavar="ADDRESS",
        help="play the pages on a Dask cluster (a scheduler address, e.g. tcp://host:8786) instead of "
        "--workers local processes; the same result either way",
    )
    add_calibrate_arguments(parser)


def add_calibrate_arguments(parser: argparse.ArgumentParser) -> None:
    """Registers the options of `dotfight lab calibrate` (besides --param, --state and the run's own)."""
    parser.add_argument(
        "--target",
        default=None,
        help="calibrate only: the target table (JSON: per preset, figures with value, band, weight; "
        "default the book's own table)",
    )
    parser.add_argument("--trials", type=int, default=30, help="calibrate only: trials in all (default 30)")
    parser.add_argument(
        "--study",
        default="calibrate.sqlite3",
        help="calibrate only: the Optuna study's SQLite file, which a rerun resumes (default "
        "calibrate.sqlite3)",
    )
    parser.add_argument(
        "--free",
        action="append",
        default=[],
        metavar="NAME=LOW:HIGH",
        help="calibrate only: also search one of the book's own numbers (reported, never adopted)",
    )


def _fail(err: Console, exc: Exception) -> int:
    code = getattr(exc, "code", "bad_request")
    err.print(f"[red]lab: {code}: {exc}[/red]")
    return 2


class PagesPerSecondColumn(ProgressColumn):
    """The pages played a second, over rich's recent window (blank until there is a rate)."""

    def render(self, task: Task) -> Text:
        """`12.3 pages/s`."""
        speed = task.finished_speed or task.speed
        return Text("" if speed is None else f"{speed:.1f} pages/s", style="progress.data.speed")


def _where(args: argparse.Namespace, workers: int) -> str:
    return f"the cluster at {args.cluster}" if args.cluster else f"{workers} worker(s)"


@contextlib.contextmanager
def _progress(err: Console, quiet: bool, label: str) -> Iterator[tuple[Tick, Callable[[int], None]]]:
    """A rich progress bar on stderr: yields (advance by n, set the total); silent when quiet, and plain
    lines now and then when stderr is a log file or a pipe, where a live bar cannot redraw."""
    if quiet:
        yield (lambda done: None), (lambda total: None)
        return
    if not err.is_terminal:
        lines = PlainProgress(label, 0, sys.stderr)
        yield lines.advance, lines.set_total
        return
    columns = (
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        PagesPerSecondColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=err) as progress:
        task = progress.add_task(label, total=None)
        yield (lambda done: progress.advance(task, done)), (lambda total: progress.update(task, total=total))


def run(args: argparse.Namespace) -> int:
    """Plays the run (or the sweep), prints the table, writes the JSON and the picture; returns the exit
    status."""
    err = Console(stderr=True)
    if args.mode == "ladder":
        return run_ladder_command(args, err)
    if args.players is not None or args.adjacent:
        return _fail(err, ValueError("--players and --adjacent belong to `dotfight lab ladder`"))
    if args.mode == "calibrate":
        return _run_calibrate(args, err)
    if args.target or args.free:
        return _fail(err, ValueError("--target and --free belong to `dotfight lab calibrate`"))
    if args.mode == "sweep" and not args.params:
        return _fail(err, ValueError("a sweep needs --param NAME=START:STOP:COUNT"))
    if args.mode != "sweep" and (args.params or args.state):
        return _fail(err, ValueError("--param and --state belong to `dotfight lab sweep`"))
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
            policy_blue=args.blue_policy,
            policy_red=args.red_policy,
        )
        sweep = None
        if args.mode == "sweep":
            sweep = Sweep(config, tuple(Param.parse(text) for text in args.params), twins=args.twins)
    except (EngineError, ValueError) as exc:
        return _fail(err, exc)
    workers = args.workers if args.workers is not None else default_workers()
    if sweep is not None:
        return _run_sweep(args, sweep, workers, err)
    started = time.perf_counter()
    pages = config.games * (2 if args.twins else 1)
    try:
        with _progress(err, args.quiet, "pages") as (tick, total):
            total(pages)
            records, twins = run_lab(config, workers, tick, twins=args.twins, cluster=args.cluster)
    except ClusterError as exc:
        return _fail(err, exc)
    elapsed = time.perf_counter() - started
    report = build_report(config, records, twins)
    if not args.quiet:
        print_report(report, Console())
        twins_note = f" ({config.games} and their free-walls twins)" if args.twins else ""
        err.print(f"{pages} pages in {elapsed:.1f} s on {_where(args, workers)}{twins_note}")
    if args.json_path:
        write_json(Path(args.json_path), report)
    if args.plot_path:
        from dotfight.lab.plot import draw_report

        draw_report(report, records, args.plot_path)
    return 0


def _run_sweep(args: argparse.Namespace, sweep: Sweep, workers: int, err: Console) -> int:
    """Plays the sweep's missing pages, writing the summary JSON as points complete."""
    json_path = Path(args.json_path) if args.json_path else None
    state = args.state or (f"{args.json_path}.pages.jsonl" if args.json_path else None)
    state_path = Path(state) if state else None
    started = time.perf_counter()

    def save(summary: dict[str, object]) -> None:
        if json_path is not None:
            write_json(json_path, summary)

    with _progress(err, args.quiet, f"sweep of {len(sweep.points)} points: pages") as (tick, total):

        def start(missing: int, all_pages: int) -> None:
            total(missing)
            if not args.quiet and missing < all_pages:
                err.print(f"resuming: {all_pages - missing} of {all_pages} pages already played ({state})")

        try:
            summary = run_sweep(sweep, workers, state_path, tick, save, start, cluster=args.cluster)
        except ClusterError as exc:
            return _fail(err, exc)
    save(summary)
    if not args.quiet:
        Console().print(sweep_table(summary))
        err.print(f"sweep done in {time.perf_counter() - started:.1f} s on {_where(args, workers)}")
    if args.plot_path:
        from dotfight.lab.plot import draw_sweep

        draw_sweep(summary, args.plot_path)
    return 0


def add_ladder_arguments(parser: argparse.ArgumentParser) -> None:
    """Registers the ladder's own options (the rest are the lab's: --preset, --games a pair, --seed, ...)."""
    parser.add_argument(
        "--players",
        default=None,
        help="ladder only: the players, comma-separated (default every strength, lowest first, then "
        f"{', '.join(REFERENCE_PLAYERS)})",
    )
    parser.add_argument(
        "--adjacent",
        action="store_true",
        help="ladder only: play only the steps (novice against the lowest strength, each strength "
        "against the next, random against novice) instead of every pair",
    )


def ladder_players(text: str | None) -> tuple[str, ...]:
    """The ladder's players: the named ones, or every strength (lowest first) and the reference players."""
    if text is None:
        return (*STRENGTHS, *REFERENCE_PLAYERS)
    names = tuple(name.strip() for name in text.split(",") if name.strip())
    unknown = [name for name in names if name not in KNOWN_PLAYERS]
    if unknown:
        raise ValueError(f"unknown player {unknown[0]!r}: choose among {', '.join(KNOWN_PLAYERS)}")
    return names


def adjacent_pairs(players: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """The steps among `players`: the novice and the strengths in order, each against the next, and
    random against the novice."""
    order = [name for name in (ANCHOR, *STRENGTHS) if name in players]
    pairs = list(pairwise(order))
    if "random" in players and ANCHOR in players:
        pairs.append(("random", ANCHOR))
    return tuple(pairs)


def run_ladder_command(args: argparse.Namespace, err: Console) -> int:
    """`dotfight lab ladder`: plays the round robin, prints and writes the ratings; returns the exit
    status."""
    if args.params or args.state:
        return _fail(err, ValueError("--param and --state belong to `dotfight lab sweep`"))
    try:
        players = ladder_players(args.players)
        ladder = Ladder(
            players=players,
            preset=args.preset,
            games=args.games,
            seed=args.seed,
            overrides=dict(args.overrides),
            turn_cap=args.turn_cap,
            only=adjacent_pairs(players) if args.adjacent else None,
        )
    except (EngineError, ValueError) as exc:
        return _fail(err, exc)
    workers = args.workers if args.workers is not None else default_workers()
    pages = ladder.games * len(ladder.pairs())
    started = time.perf_counter()
    with _progress(err, args.quiet, f"ladder of {len(ladder.pairs())} pairs: pages") as (tick, total):
        total(pages)
        scores = run_ladder(ladder, workers, tick, cluster=args.cluster)
    report = build_ladder_report(ladder, scores, (ANCHOR, *STRENGTHS))
    if not args.quiet:
        console = Console()
        for table in ladder_tables(report):
            console.print(table)
        err.print(f"{pages} pages in {time.perf_counter() - started:.1f} s on {workers} worker(s)")
    if args.json_path:
        write_json(Path(args.json_path), report)
    if args.plot_path:
        from dotfight.lab.plot import draw_ladder

        draw_ladder(report, args.plot_path)
    return 0


def _run_calibrate(args: argparse.Namespace, err: Console) -> int:
    """Runs (or resumes) the calibration, printing each trial; writes the JSON and the picture."""
    from dotfight.lab.book import book_target
    from dotfight.lab.calibrate import CalibrationError, LabEvaluator, Space, Target, calibrate

    try:
        if args.trials < 1:
            raise CalibrationError("bad_param", "--trials must be at least 1")
        target = (
            Target.load(Path(args.target), args.games) if args.target else Target.from_json(book_target())
        )
        space = Space.parse(args.params, args.free)
        evaluator = LabEvaluator(
            target,
            bot=args.bot,
            bot_red=args.bot_red,
            seed=args.seed,
            alternate=args.alternate,
            turn_cap=args.turn_cap,
            overrides=dict(args.overrides),
            workers=args.workers if args.workers is not None else default_workers(),
            cluster=args.cluster,
            state_path=Path(args.state or f"{args.study}.pages.jsonl"),
        )
        for preset in target.presets:  # every corner of the space is a valid rule set before any page
            for corner in itertools.product(*space.ranges.values()):
                evaluator.config(preset, dict(zip(space.ranges, corner, strict=True)))
        start = {
            n: getattr(RuleSet.preset(target.presets[0].preset, **evaluator.overrides), n)
            for n in space.ranges
        }
    except (EngineError, ValueError) as exc:
        return _fail(err, exc)
    json_path = Path(args.json_path) if args.json_path else None
    per_trial = evaluator.pages()
    settings = {"bot": args.bot, "bot_red": args.bot_red, "alternate": args.alternate}
    settings |= {"turn_cap": args.turn_cap, "overrides": dict(args.overrides)}
    started = time.perf_counter()
    with _progress(err, args.quiet, f"calibration, {args.trials} trials: pages") as (tick, total):
        evaluator.progress = tick

        def begin(done: int) -> None:
            total(max(0, args.trials - done) * per_trial)
            if done and not args.quiet:
                err.print(f"resuming: {done} of {args.trials} trials already played ({args.study})")

        def told(trial: dict[str, Any]) -> None:
            if not args.quiet:
                err.print(_trial_line(trial))
            if json_path is not None:
                write_json(json_path, {"trials_so_far": trial["number"] + 1, "last": trial})

        try:
            summary = calibrate(
                target,
                space,
                evaluator,
                args.trials,
                seed=args.seed,
                study_path=Path(args.study),
                start=start,
                settings=settings,
                on_trial=told,
                on_start=begin,
            )
        except (ClusterError, CalibrationError) as exc:
            return _fail(err, exc)
    summary["settings"] = {**settings, "seed": args.seed, "trials": args.trials, "study": args.study}
    summary["settings"]["pages_per_trial"] = per_trial
    if json_path is not None:
        write_json(json_path, summary)
    if not args.quiet:
        print_calibration(summary, Console())
        err.print(
            f"calibration done in {time.perf_counter() - started:.1f} s on {_where(args, evaluator.workers)}"
        )
    if args.plot_path:
        from dotfight.lab.plot import draw_calibration

        draw_calibration(summary, args.plot_path)
    return 0


def _trial_line(trial: dict[str, Any]) -> str:
    point = ", ".join(f"{k}={v:g}" for k, v in trial["point"].items())
    figures = "; ".join(
        f"{preset} "
        + " ".join(
            f"{name} {figure['value']:.3g}"
            for name, figure in measured.items()
            if figure is not None and figure.get("value") is not None and name in trial["deviations"][preset]
        )
        for preset, measured in trial["figures"].items()
    )
    return f"trial {trial['number']}: score {trial['score']:.3f} at {point} ({figures})"


def print_calibration(summary: dict[str, Any], console: Console) -> None:
    """The calibration's report: the best point, each figure from the baseline to the best, tensions."""
    from rich.table import Table

    best, baseline = summary["best"], summary["baseline"]
    table = Table(
        title=f"best of {len(summary['trials'])} trials: trial {best['number']}, score {best['score']:.3f}"
    )
    for column in ("preset", "figure", "book", "band", "baseline", "best [95 %]", "inside"):
        table.add_column(column)
    for m in summary["figures"]:
        low, high = m["best_interval"]
        interval = f" [{low:.3g}, {high:.3g}]" if low is not None and high is not None else ""
        table.add_row(
            m["preset"],
            m["figure"],
            f"{m['value']:g}",
            f"{m['band'][0]:g}–{m['band'][1]:g}",
            "—" if m["baseline"] is None else f"{m['baseline']:.3g}",
            "—" if m["best"] is None else f"{m['best']:.3g}{interval}",
            "yes" if m["inside"] else "[red]no[/red]",
        )
    console.print(table)
    console.print(
        "point: " + ", ".join(f"{k}={v:g} (was {baseline['point'][k]:g})" for k, v in best["point"].items())
    )
    if summary["free"]:
        console.print(
            f"[yellow]--free {', '.join(summary['free'])}: the book fixes these; the point is reported, "
            "never adopted[/yellow]"
        )
    for tension in summary["tensions"]:
        a, b = tension["figures"]
        numbers = ", ".join(f"{n['number']} ({a} {n[a]}, {b} {n[b]})" for n in tension["numbers"])
        console.print(f"pull against each other: {a} and {b} (cosine {tension['cosine']:.2f}) on {numbers}")


if __name__ == "__main__":  # pragma: no cover - `dotfight lab` is the entry point
    parser = argparse.ArgumentParser(prog="dotfight lab")
    add_arguments(parser)
    sys.exit(run(parser.parse_args()))
