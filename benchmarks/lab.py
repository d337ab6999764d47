"""The rules lab's speed: how long 1000 pages (and their free-walls twins) take, what the lab's own
bookkeeping costs over the bare bots and engine, and pages a second on one core, two, and a Dask cluster.

    python3 benchmarks/lab.py [--preset quick] [--games 100] [--workers N] [--bot easy] [--full]
                              [--no-twins] [--rounds 3] [--overhead-games 10] [--runners-games 16]

1. Plays `--games` pages (the full 1000 with `--full`) and their free-walls twins with the lab's own
   runner on `--workers` processes; prints the seconds per page (wall clock, all workers together) and
   the extrapolated time for 1000 pages with their twins (what `dotfight lab --games 1000` plays).
2. Overhead, in one process, interleaved rounds: the same `--overhead-games` pages played by a bare loop
   (bots choose, the engine applies, nothing counted) and by the lab's page player (every figure
   counted); prints both medians and their ratio.
3. Runners, interleaved rounds: `--runners-games` pages (no twins) played by one process, by a local pool
   of two and by a two-worker `distributed.LocalCluster` (started once, on loopback, before the rounds;
   its start is timed apart); prints each one's median pages a second and its ratio to one process, and
   checks that the three played the very same pages.
"""

from __future__ import annotations

import argparse
import statistics
import time

from dotfight.engine import apply, new_page
from dotfight.lab import LabConfig
from dotfight.lab.cli import DEFAULT_BOT
from dotfight.lab.config import make_bot
from dotfight.lab.page import play_page
from dotfight.lab.runner import default_workers, local_cluster, run_lab, run_pages


def bare_page(config: LabConfig, index: int) -> int:
    """The baseline: the page played with nothing counted; returns its actions."""
    (bs, bp), (rs, rp) = config.players(index)
    bots = {
        "blue": make_bot(bs, config.bot_seed(index, "blue"), bp),
        "red": make_bot(rs, config.bot_seed(index, "red"), rp),
    }
    state = new_page(config.rules(), config.page_seed(index))
    actions = 0
    while state.actor is not None:
        side = state.actor
        state, _ = apply(state, side, bots[side].choose(state))
        actions += 1
        if state.turn is not None and state.turn.number > config.turn_cap:
            break
    return actions


def overhead(config: LabConfig, games: int, rounds: int) -> tuple[float, float]:
    """Median seconds per round of the bare loop and of the lab's page player (interleaved)."""
    bare, lab = [], []
    for _ in range(rounds):
        started = time.perf_counter()
        for i in range(games):
            bare_page(config, i)
        bare.append(time.perf_counter() - started)
        started = time.perf_counter()
        for i in range(games):
            play_page(config, i)
        lab.append(time.perf_counter() - started)
    return statistics.median(bare), statistics.median(lab)


def runners(config: LabConfig, rounds: int) -> None:
    """Pages a second on one process, a pool of two and a two-worker LocalCluster, interleaved."""
    from distributed import Client

    started = time.perf_counter()
    with local_cluster(2) as cluster, Client(cluster) as client:  # type: ignore[no-untyped-call]
        print(f"LocalCluster of 2 workers started in {time.perf_counter() - started:.1f} s")
        ways = {
            "one process": {"workers": 1},
            "pool of 2": {"workers": 2},
            "LocalCluster of 2": {"cluster": client},
        }
        rates: dict[str, list[float]] = {name: [] for name in ways}
        pages: dict[str, list[dict[str, object]]] = {}
        for _ in range(rounds):
            for name, how in ways.items():
                started = time.perf_counter()
                records = run_pages(config, **how)
                rates[name].append(config.games / (time.perf_counter() - started))
                pages[name] = [r.to_json() for r in records]
    same = all(played == pages["one process"] for played in pages.values())
    one = statistics.median(rates["one process"])
    for name, measured in rates.items():
        rate = statistics.median(measured)
        print(f"{name}: {rate:.2f} pages/s (median of {rounds}), {rate / one:.2f} × one process")
    print(f"the same {config.games} pages from all three: {same}")


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
    parser.add_argument("--no-twins", dest="twins", action="store_false", help="skip the free-walls twins")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds of the overhead test")
    parser.add_argument("--overhead-games", type=int, default=10, help="pages a round (0: skip)")
    parser.add_argument(
        "--runners-games", type=int, default=16, help="pages a round of the runners' comparison (0: skip)"
    )
    parser.add_argument("--only-runners", action="store_true", help="skip parts 1 and 2")
    args = parser.parse_args()
    games = 1000 if args.full else args.games
    if args.runners_games > 0 and args.only_runners:
        small = LabConfig(preset=args.preset, games=args.runners_games, seed=args.seed, bot_blue=args.bot)
        runners(small, args.rounds)
        return
    config = LabConfig(preset=args.preset, games=games, seed=args.seed, bot_blue=args.bot)
    started = time.perf_counter()
    records, twins = run_lab(config, args.workers, twins=args.twins)
    elapsed = time.perf_counter() - started
    pages = games * (2 if args.twins else 1)
    turns = sum(r.turns for r in records) / len(records)
    free = f", {sum(r.turns for r in twins) / len(twins):.1f} with free walls" if twins else ""
    per_page = elapsed / games  # a page with its twin
    print(
        f"{games} {args.preset} pages{' and their twins' if args.twins else ''} ({pages} in all), "
        f"bot {args.bot}, {args.workers} worker(s): {elapsed:.1f} s "
        f"({per_page * 1000:.0f} ms per page{' with its twin' if args.twins else ''}, "
        f"{turns:.1f} turns per page{free})"
    )
    print(
        f"1000 pages{' with twins' if args.twins else ''}: {'measured' if args.full else 'extrapolated'} "
        f"{per_page * 1000:.0f} s ({per_page * 1000 / 60:.1f} min; the target is 5 min)"
    )
    if args.overhead_games > 0:
        small = LabConfig(preset=args.preset, games=args.overhead_games, seed=args.seed, bot_blue=args.bot)
        bare, lab = overhead(small, args.overhead_games, args.rounds)
        print(
            f"overhead ({args.overhead_games} pages a round, {args.rounds} interleaved rounds, one process): "
            f"bare bots + engine {bare:.2f} s, lab page player {lab:.2f} s, ratio {lab / bare:.3f}"
        )
    if args.runners_games > 0:
        small = LabConfig(preset=args.preset, games=args.runners_games, seed=args.seed, bot_blue=args.bot)
        runners(small, args.rounds)


if __name__ == "__main__":
    main()
