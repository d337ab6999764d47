"""Engine benchmark: the cost of one resolved snipe and lunge, and whole pages of random legal play.

Builds a mid-game Classic page (4 × 8 a side: 64 soldiers, 8 bases, standard rules with randomness on,
some ink already drawn) and times `resolve_snipe` and `resolve_lunge` call by call over many varied
flicks (random shooter, aim and power), printing the median and p90 in microseconds in three situations:
"opened" (a state just rebuilt from storage: the per-state views are built from scratch), "next" (the
state after a flick that changed one soldier: the views are carried over and patched), and "warm" (the
views already built).

Then plays whole quick-preset pages with the random legal player of tests/engine/strategies.py and
prints pages per second, with and without the player's own cost (replaying the recorded logs).

    python3 benchmarks/engine.py                  # about 10 s
    python3 benchmarks/engine.py --calls 20000 --pages 200
    python3 benchmarks/engine.py --profile        # cProfile of the snipe and lunge paths, and of replay
    python3 benchmarks/engine.py --against /tmp/engine-old --rounds 3   # interleaved with another tree

`--against DIR` runs this script and DIR's own `benchmarks/engine.py` (an older checkout, e.g. made
with `git archive <commit> dotfight tests benchmarks | tar -x -C DIR`) in alternating subprocesses and
prints each figure's median over the rounds for both, and the ratio this/that (below 1: faster here).

It also times the rule questions of `dotfight.engine.query` (`refusal`, `turn_options`) and a convoy's
arrival (the bounded free-spot search) on the same kind of page.

Targets on the 2-core development machine: snipe ≤ 30 µs and lunge ≤ 80 µs median; a median over its
target is marked with "!".
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import math
import pstats
import random
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Run as a plain script from anywhere: the random legal player lives in the test tree.
REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from dotfight.engine import Replay, RuleSet, State, apply, new_page, resolve_lunge, resolve_snipe  # noqa: E402
from dotfight.engine.state import evolve_soldiers  # noqa: E402
from tests.engine.strategies import legal_action, play_page  # noqa: E402

TARGET_US = {"snipe": 30.0, "lunge": 80.0}
Resolver = Callable[[State, str, tuple[float, float]], tuple[State, list[dict[str, Any]]]]


def mid_game_classic(seed: int = 2024, ink_lines: int = 24) -> State:
    """Plays a Classic page (bases drawn by hand) until `ink_lines` lines are on the page, blue to flick."""
    rng = random.Random(seed)
    state = new_page(RuleSet.preset("classic"), seed)
    while state.phase != "play" or len(state.ink) < ink_lines or state.actor != "blue" or state.turn is None:
        if state.phase == "over":
            raise RuntimeError("the warm-up page ended early; pick another seed")
        side = state.actor
        assert side is not None
        # Soft snipes mostly: the page fills with ink while most soldiers stay on it.
        action = legal_action(state, rng, quick_setup_chance=0.0)
        if action["type"] == "flick" and state.turn is not None and state.turn.chain is None:
            action = {**action, "kind": "snipe", "vector": [v * 0.3 for v in action["vector"]]}
        state, _ = apply(state, side, action)
    if state.turn.chain is not None:
        raise RuntimeError("the warm-up page stopped on a pending chain; pick another seed")
    return state


def flick_cases(state: State, count: int, seed: int = 7) -> list[tuple[str, tuple[float, float]]]:
    """Varied flicks for blue: any flickable soldier, aimed at an enemy or anywhere, any power."""
    rng = random.Random(seed)
    shooters = state.flickable("blue")
    enemies = state.living("red")
    cases = []
    for _ in range(count):
        shooter = state.soldier(rng.choice(shooters))
        if rng.random() < 0.7:
            target = rng.choice(enemies)
            angle = math.atan2(target.y - shooter.y, target.x - shooter.x)
        else:
            angle = rng.uniform(-math.pi, math.pi)
        pull = rng.uniform(20.0, 400.0)
        cases.append((shooter.id, (pull * math.cos(angle), pull * math.sin(angle))))
    return cases


def time_calls(
    resolve: Resolver, states: list[State], cases: list[tuple[str, tuple[float, float]]]
) -> list[float]:
    """Times each call on its own (nanosecond clock) and returns microseconds per call."""
    timings = []
    clock = time.perf_counter_ns
    for state, (soldier, vector) in zip(states, cases, strict=True):
        start = clock()
        resolve(state, soldier, vector)
        timings.append((clock() - start) / 1000.0)
    return timings


def percentile(values: list[float], fraction: float) -> float:
    """Returns the value below which `fraction` of the values lie (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def opened_copies(state: State, count: int) -> list[State]:
    """Copies built afresh with no derived views, as a page just opened from storage."""
    return [dataclasses.replace(state) for _ in range(count)]


def next_flick_copies(state: State, count: int) -> list[State]:
    """Copies as the state after a flick that moved or crossed out one soldier: the engine's views are
    carried over and patched for that one soldier on first use (whichever soldier the engine tracks)."""
    state.arrays  # noqa: B018 -- the views of the state the previous flick started from
    copies = []
    for k in range(count):
        index = k % len(state.soldiers)
        copies.append(evolve_soldiers(state, {index: dataclasses.replace(state.soldiers[index])}))
    return copies


SITUATIONS: dict[str, Callable[[State, int], list[State]]] = {
    "opened": opened_copies,
    "next": next_flick_copies,
    "warm": lambda state, count: [state] * count,
}


def bench_resolution(state: State, calls: int) -> None:
    """Prints median and p90 microseconds per resolved snipe and lunge, in each situation."""
    cases = flick_cases(state, calls)
    living = sum(1 for s in state.soldiers if s.alive)
    print(
        f"mid-game Classic page: {len(state.soldiers)} soldiers ({living} living), {len(state.bases)} bases, "
        f"{len(state.ink)} lines of ink; {calls} calls per figure (median / p90, µs)"
    )
    resolvers: dict[str, Resolver] = {"snipe": resolve_snipe, "lunge": resolve_lunge}
    for kind, resolve in resolvers.items():
        time_calls(resolve, opened_copies(state, 200), cases[:200])  # warm up the interpreter's caches
        figures = []
        for name, copies in SITUATIONS.items():
            timings = time_calls(resolve, copies(state, calls), cases)
            median = statistics.median(timings)
            mark = " " if median <= TARGET_US[kind] else "!"
            figures.append(f"{name} {median:6.1f}{mark}/ {percentile(timings, 0.9):6.1f}")
        print(
            f"  {kind:5}  " + "   ".join(figures) + f"   (target: median ≤ {TARGET_US[kind]:.0f}; ! = over)"
        )


def bench_pages(pages: int) -> None:
    """Prints pages per second of whole quick-preset pages: played by the random player, and replayed."""
    rules = RuleSet.preset("quick")
    start = time.perf_counter()
    played = [play_page(rules, seed, random.Random(seed)) for seed in range(pages)]
    played_s = time.perf_counter() - start
    actions = sum(len(page.log) for page in played)
    start = time.perf_counter()
    for page in played:
        replay = Replay(rules, page.seed, page.log)
        assert replay.error is None
    replay_s = time.perf_counter() - start
    print(f"quick preset, {pages} whole pages, {actions / pages:.0f} actions a page on average")
    print(f"  random legal play (player + engine): {pages / played_s:7.1f} pages/s")
    print(
        f"  replay of the same logs (engine):    {pages / replay_s:7.1f} pages/s  "
        f"({replay_s / actions * 1e6:.0f} µs per action)"
    )


def bench_questions(calls: int) -> None:
    """Prints microseconds per rule question and per convoy arrival on Quick and Dawood pages."""
    try:
        from dotfight.engine import refusal, turn_options
    except ImportError:  # an older tree without engine/query.py
        return
    for preset in ("quick", "dawood"):
        state = new_page(RuleSet.preset(preset), 5)
        for side, kind in (("blue", "quick_setup"), ("blue", "ready"), ("red", "ready")):
            state, _ = apply(state, side, {"type": kind})
        flick = {"type": "flick", "soldier": "b1s1", "kind": "snipe", "vector": [0.0, -100.0]}
        figures = {
            "refusal": per_call_us(lambda s=state, a=flick: refusal(s, "blue", a), calls),
            "turn_options": per_call_us(lambda s=state: turn_options(s), max(1, calls // 20)),
        }
        men = [s.id for s in state.soldiers if s.id.startswith("b1s")][:5]
        sent, _ = apply(state, "blue", {"type": "send", "from": "b1", "to": "b3", "soldiers": men})
        sent, _ = apply(
            sent, "blue", {"type": "flick", "soldier": "b3s1", "kind": "snipe", "vector": [1.0, 0.0]}
        )
        arriving = {"type": "flick", "soldier": "b2s1", "kind": "snipe", "vector": [-1.0, 0.0]}
        figures["arrival"] = per_call_us(lambda s=sent, a=arriving: apply(s, "red", a), max(1, calls // 20))
        print(
            f"  {preset:6} questions: " + "   ".join(f"{name} {us:7.1f} µs" for name, us in figures.items())
        )


def per_call_us(call: Callable[[], object], calls: int) -> float:
    """Returns the median of five batches' microseconds per call."""
    batches = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        batches.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(batches)


FIGURE = re.compile(
    r"^\s*(?P<kind>snipe|lunge)\s+opened\s+(?P<opened>[\d.]+).*?next\s+(?P<next>[\d.]+).*?warm\s+(?P<warm>[\d.]+)"
)
PAGES = re.compile(
    r"^\s*(?P<name>random legal play|replay of the same logs)[^:]*:\s+(?P<rate>[\d.]+) pages/s"
)


def run_against(other: Path, rounds: int, calls: int, pages: int) -> None:
    """Runs this script and `other`'s in alternating subprocesses; prints medians and ratios."""
    scripts = {"this": Path(__file__).resolve(), "that": other.resolve() / "benchmarks" / "engine.py"}
    results: dict[str, dict[str, list[float]]] = {"this": {}, "that": {}}
    for round_number in range(rounds):
        order = ("that", "this") if round_number % 2 else ("this", "that")
        for which in order:
            command = [sys.executable, str(scripts[which]), "--calls", str(calls), "--pages", str(pages)]
            output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
            for line in output.splitlines():
                if match := FIGURE.match(line):
                    for situation in ("opened", "next", "warm"):
                        name = f"{match['kind']} {situation} (µs)"
                        results[which].setdefault(name, []).append(float(match[situation]))
                elif match := PAGES.match(line):
                    results[which].setdefault(f"{match['name']} (pages/s)", []).append(float(match["rate"]))
    print(f"{rounds} interleaved rounds, median of each figure; ratio = this / that")
    for name, values in results["this"].items():
        mine, theirs = statistics.median(values), statistics.median(results["that"].get(name, [math.nan]))
        print(f"  {name:40} this {mine:8.1f}   that {theirs:8.1f}   ratio {mine / theirs:5.2f}")


def profile_resolution(state: State, calls: int) -> None:
    """Prints cProfile's top functions by own time for snipe and lunge calls on freshly opened states."""
    cases = flick_cases(state, calls)
    for kind, resolve in (("snipe", resolve_snipe), ("lunge", resolve_lunge)):
        copies = opened_copies(state, calls)
        profiler = cProfile.Profile()
        profiler.enable()
        for copy, (soldier, vector) in zip(copies, cases, strict=True):
            resolve(copy, soldier, vector)
        profiler.disable()
        print(f"== {kind}: {calls} calls on freshly opened states, top functions by own time")
        pstats.Stats(profiler).sort_stats("tottime").print_stats(12)


def profile_replay(pages: int) -> None:
    """Prints cProfile's top functions by own time for replaying whole quick-preset pages."""
    rules = RuleSet.preset("quick")
    logs = [play_page(rules, seed, random.Random(seed)) for seed in range(pages)]
    profiler = cProfile.Profile()
    profiler.enable()
    for page in logs:
        Replay(rules, page.seed, page.log)
    profiler.disable()
    print(f"== replay of {pages} quick-preset pages, top functions by own time")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(15)


def main() -> None:
    """Runs the benchmark with the command-line options."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=5000, help="timed calls per resolution figure")
    parser.add_argument("--pages", type=int, default=100, help="whole quick-preset pages to play")
    parser.add_argument(
        "--profile", action="store_true", help="profile the hot paths and replay instead of timing"
    )
    parser.add_argument("--against", type=Path, help="another checkout to compare with, interleaved")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds with --against")
    args = parser.parse_args()
    if args.against is not None:
        run_against(args.against, args.rounds, args.calls, args.pages)
        return
    state = mid_game_classic()
    if args.profile:
        profile_resolution(state, args.calls)
        profile_replay(args.pages)
        return
    bench_resolution(state, args.calls)
    bench_questions(args.calls)
    bench_pages(args.pages)


if __name__ == "__main__":
    main()
