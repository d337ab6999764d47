"""Engine benchmark: the server's engine work per move, one resolved snipe and lunge, and whole pages.

First the server's per-move sequence (issue 12): what an engine thread of the server does for every
action — `apply`, then `turn_options` of the new state (`events_on_the_wire` asks it once when there are
events), and `State.to_json` every 8th version and at the end (the store's checkpoint) — over a mix of
pages from their first action: the server benchmark's soft snipes (benchmarks/server.py: each side
flicks its soldiers in turn straight at its own edge) on 8 quick pages, and real pages (the four golden
pages, four Dawood-bot pages and four pages of random legal play: lunges, chains, sends, arrivals, set-up
and the end). Prints µs per move for the whole sequence and its three parts (the median of
`--sequence-rounds` rounds, collector off while timing), the containers each move leaves alive (the
collector's young-generation count grows by them: the new state's parts, the events, the options and the
checkpoint, which the server holds until they are sent and stored), and a digest of every outcome
(events, options, checkpoints) that must not change with a speed-up.

Then the server's whole per-action path (issue 22): `apply`, `with_cross_sides` of the events, the new
turn's options on the last of them (`events_on_the_wire`), and the checkpoint's JSON text (`State.to_json`
written by orjson, as the store does) at the server's own interval (`checkpoint_interval`) and at the end;
over the same soft snipes and over all moves. And the memory a page's state holds of its own
(tracemalloc, 200 pages): a quick page set up and joined (its first turn's options asked), and the same
pages after 20 soft snipes each.

Then builds a mid-game Classic page (4 × 8 a side: 64 soldiers, 8 bases, standard rules with randomness
on, some ink already drawn) and times `resolve_snipe` and `resolve_lunge` call by call over many varied
flicks (random shooter, aim and power), printing the median and p90 in microseconds in three situations:
"opened" (a state just rebuilt from storage: the per-state views are built from scratch), "next" (the
state after a flick that changed one soldier: the views are carried over and patched), and "warm" (the
views already built).

Then plays whole quick-preset pages with the random legal player of tests/engine/strategies.py and
prints pages per second, with and without the player's own cost (replaying the recorded logs).

    python3 benchmarks/engine.py                  # about 20 s
    python3 benchmarks/engine.py --only-sequence  # the server's per-move sequence alone
    python3 benchmarks/engine.py --calls 20000 --pages 200
    python3 benchmarks/engine.py --profile        # cProfile of the snipe and lunge paths, and of replay
    python3 benchmarks/engine.py --against /tmp/engine-old --rounds 3   # interleaved with another tree

`--against DIR` runs this script in alternating subprocesses on this tree's engine and on DIR's (an
older checkout, e.g. made with `git archive <commit> dotfight tests benchmarks | tar -x -C DIR`, imported
with `--tree DIR`), prints each figure's median over the rounds for both and the ratio this/that (below
1: faster here), and whether every outcome of the per-move sequence is the same in both trees.

It also times the rule questions of `dotfight.engine.query` (`refusal`, `turn_options`) and a convoy's
arrival (the bounded free-spot search) on the same kind of page.

Targets on the 2-core development machine: snipe ≤ 30 µs and lunge ≤ 80 µs median; a median over its
target is marked with "!".
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import functools
import gc
import hashlib
import json
import math
import pstats
import random
import re
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Run as a plain script from anywhere: the random legal player lives in the test tree. With `--tree DIR`
# the engine (and the player) are imported from another checkout instead: `--against` times both trees
# with this one script.
REPO_ROOT = Path(__file__).resolve().parents[1]
TREE = Path(sys.argv[sys.argv.index("--tree") + 1]).resolve() if "--tree" in sys.argv else REPO_ROOT
if str(TREE) not in sys.path:
    sys.path.insert(0, str(TREE))

from dotfight.engine import (  # noqa: E402
    Replay,
    RuleSet,
    State,
    apply,
    new_page,
    resolve_lunge,
    resolve_snipe,
    turn_options,
)
from dotfight.engine.query import with_cross_sides  # noqa: E402
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
            "refusal": per_call_us(functools.partial(refusal, state, "blue", flick), calls),
            "turn_options": per_call_us(functools.partial(turn_options, state), max(1, calls // 20)),
        }
        men = [s.id for s in state.soldiers if s.id.startswith("b1s")][:5]
        sent, _ = apply(state, "blue", {"type": "send", "from": "b1", "to": "b3", "soldiers": men})
        sent, _ = apply(
            sent, "blue", {"type": "flick", "soldier": "b3s1", "kind": "snipe", "vector": [1.0, 0.0]}
        )
        arriving = {"type": "flick", "soldier": "b2s1", "kind": "snipe", "vector": [-1.0, 0.0]}
        figures["arrival"] = per_call_us(functools.partial(apply, sent, "red", arriving), max(1, calls // 20))
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


# ---- the server's per-move sequence (issue 12) -----------------------------------------------------

# The private state (`State.to_json`) is checkpointed every this many versions and at the end. Fixed
# here rather than read from the server (dotfight/server/pages/authority.py `CACHE_EVERY`, now 16), so
# that `--against` times both trees on the same sequence; at 8 it overstates to_json's share a little.
CHECKPOINT_EVERY = 8
# benchmarks/server.py's soft pull: short, sure ink that stays in the flicker's own half.
SOFT_PULL = 40.0
GOLDEN_DIR = Path(__file__).resolve().parents[1] / "tests" / "engine" / "golden"

Move = tuple[str, Any]


@dataclasses.dataclass
class Sequence:
    """A page's moves from its blank page: `start` builds the page (fresh every round)."""

    group: str
    start: Callable[[], State]
    moves: list[Move]


def soft_snipe_moves(start: State, count: int) -> list[Move]:
    """`count` soft snipes as benchmarks/server.py plays them: each side in turn flicks its soldiers one
    after the other (by their order in the snapshot) straight towards its own edge of the page."""
    alive = {side: [s.id for s in start.soldiers if s.side == side and s.alive] for side in ("blue", "red")}
    moves: list[Move] = []
    state = start
    for made in range(count):
        side = state.actor
        assert side is not None
        soldier = alive[side][made % len(alive[side])]
        direction = 1.0 if side == "blue" else -1.0
        vector = [0.0, direction * SOFT_PULL]
        action = {"type": "flick", "soldier": soldier, "kind": "snipe", "vector": vector}
        state, _ = apply(state, side, action)
        moves.append((side, action))
    return moves


def bot_moves(rules: RuleSet, seed: int, strength: str) -> list[Move]:
    """The log of a page Dawood-bot plays against itself (at most 400 actions)."""
    from dotfight.bot import DawoodBot

    bots = {"blue": DawoodBot(strength, seed=seed + 1), "red": DawoodBot(strength, seed=seed + 2)}
    state = new_page(rules, seed)
    moves: list[Move] = []
    while state.actor is not None and len(moves) < 400:
        side = state.actor
        action = bots[side].choose(state)
        state, _ = apply(state, side, action)
        moves.append((side, action))
    return moves


def server_sequences() -> list[Sequence]:
    """The mix: the server benchmark's soft snipes on quick pages (from the first turn of play), and real
    pages from their first action — the golden pages, Dawood-bot pages and random legal play (lunges,
    chains, sends, set-up and the end)."""
    sequences = []
    for seed in range(1, 9):
        rules = RuleSet.preset("quick")
        ready = new_page(rules, seed)
        for side, kind in (("blue", "quick_setup"), ("blue", "ready"), ("red", "ready")):
            ready, _ = apply(ready, side, {"type": kind})
        moves = [("blue", {"type": "quick_setup"}), ("blue", {"type": "ready"}), ("red", {"type": "ready"})]
        moves += soft_snipe_moves(ready, 150)
        sequences.append(Sequence("soft snipes", functools.partial(new_page, rules, seed), moves))
    for path in sorted(GOLDEN_DIR.glob("*.json")):
        record = json.loads(path.read_text())
        rules = RuleSet.from_json(record["rules"])
        seed = int(record["seed"], 16)
        moves = [(entry["side"], entry["action"]) for entry in record["actions"]]
        sequences.append(Sequence("real pages", functools.partial(new_page, rules, seed), moves))
    bot_pages = (("quick", 3, "normal"), ("quick", 4, "easy"), ("classic", 5, "easy"), ("dawood", 6, "easy"))
    for preset, seed, strength in bot_pages:
        rules = RuleSet.preset(preset)
        moves = bot_moves(rules, seed, strength)
        sequences.append(Sequence("real pages", functools.partial(new_page, rules, seed), moves))
    for seed in range(4):
        rules = RuleSet.preset("quick")
        page = play_page(rules, seed, random.Random(seed))
        moves = [(entry["side"], entry["action"]) for entry in page.log]
        sequences.append(Sequence("real pages", functools.partial(new_page, rules, seed), moves))
    return sequences


def server_move(state: State, side: str, action: Any) -> tuple[State, list[dict[str, Any]], Any, Any]:
    """One move as the server's engine thread makes it: `apply`, the new turn's options for the wire
    (`events_on_the_wire` asks `turn_options` once when there are events), and the store's checkpoint
    (`State.to_json`) every CHECKPOINT_EVERY versions and at the end."""
    state, events = apply(state, side, action)
    options = turn_options(state) if events else None
    checkpoint = state.to_json() if state.version % CHECKPOINT_EVERY == 0 or state.phase == "over" else None
    return state, events, options, checkpoint


def time_sequences(sequences: list[Sequence], rounds: int) -> dict[str, dict[str, float]]:
    """Returns, per group and for all moves, the median over `rounds` of µs per move: the whole sequence,
    and apply / turn options / to_json apart (the collector off while timing: its cost is counted as
    containers below)."""
    clock = time.perf_counter_ns
    per_round: dict[str, dict[str, list[float]]] = {}
    moves_in: dict[str, int] = {}
    for sequence in sequences:
        moves_in[sequence.group] = moves_in.get(sequence.group, 0) + len(sequence.moves)
    moves_in["all moves"] = sum(len(s.moves) for s in sequences)
    gc.collect()
    gc.disable()
    try:
        for _ in range(rounds):
            spent: dict[str, list[int]] = {group: [0, 0, 0, 0] for group in moves_in}
            for sequence in sequences:
                state = sequence.start()
                parts = spent[sequence.group]
                for side, action in sequence.moves:
                    t0 = clock()
                    state, events = apply(state, side, action)
                    t1 = clock()
                    if events:
                        turn_options(state)
                    t2 = clock()
                    if state.version % CHECKPOINT_EVERY == 0 or state.phase == "over":
                        state.to_json()
                    t3 = clock()
                    parts[0] += t3 - t0
                    parts[1] += t1 - t0
                    parts[2] += t2 - t1
                    parts[3] += t3 - t2
            for group, parts in list(spent.items()):
                if group != "all moves":
                    spent["all moves"] = [a + b for a, b in zip(spent["all moves"], parts, strict=True)]
            for group, parts in spent.items():
                figures = per_round.setdefault(group, {})
                for name, ns in zip(("sequence", "apply", "turn_options", "to_json"), parts, strict=True):
                    figures.setdefault(name, []).append(ns / 1000.0 / moves_in[group])
            gc.collect()
    finally:
        gc.enable()
    return {
        group: {name: statistics.median(values) for name, values in figures.items()}
        for group, figures in per_round.items()
    }


def count_and_digest(sequences: list[Sequence]) -> tuple[dict[str, float], str]:
    """Returns the containers each move leaves alive per group (the collector's young-generation count
    grows by them: the new state's parts, the events, the options and the checkpoint, which the server
    holds until they are sent and stored), and a digest of every outcome (events, options, checkpoints)
    that must be the same in every tree."""
    digest = hashlib.sha256()
    kept: dict[str, list[int]] = {}
    gc.collect()
    gc.disable()
    # The count only falls while it is above zero: a cushion keeps frees of earlier states counted.
    cushion: list[list[int]] = [[] for _ in range(200_000)]
    try:
        for sequence in sequences:
            state = sequence.start()
            tally = kept.setdefault(sequence.group, [0, 0])
            for side, action in sequence.moves:
                previous = state  # still held while the move is counted: its frees are not the move's
                before = gc.get_count()[0]
                state, events, options, checkpoint = server_move(previous, side, action)
                tally[0] += gc.get_count()[0] - before
                tally[1] += 1
                digest.update(json.dumps([events, options, checkpoint]).encode())
                del previous, events, options, checkpoint
    finally:
        del cushion
        gc.enable()
    figures = {group: total / moves for group, (total, moves) in kept.items()}
    figures["all moves"] = sum(t for t, _ in kept.values()) / sum(m for _, m in kept.values())
    return figures, digest.hexdigest()[:16]


def held_kb(sequences: list[Sequence]) -> dict[str, float]:
    """Returns, per group, the KB a page's state holds in memory after its last move (its own views
    included), as the server keeps it: each page played through `apply` and `turn_options` and its final
    state kept (a first pass leaves the views shared between pages already made)."""

    def final_states(group: list[Sequence]) -> list[State]:
        kept = []
        for sequence in group:
            state = sequence.start()
            for side, action in sequence.moves:
                state, events = apply(state, side, action)
                if events:
                    turn_options(state)
            kept.append(state)
        return kept

    groups: dict[str, list[Sequence]] = {"all moves": sequences}
    for sequence in sequences:
        groups.setdefault(sequence.group, []).append(sequence)
    final_states(sequences)
    figures = {}
    for name, group in groups.items():
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            kept = final_states(group)
            gc.collect()
            figures[name] = (tracemalloc.get_traced_memory()[0] - before) / len(kept) / 1024
        finally:
            tracemalloc.stop()
        del kept
    return figures


def bench_server_sequence(rounds: int) -> None:
    """Prints µs per move of the server's engine work over the mix, its parts, and containers per move."""
    sequences = server_sequences()
    kept, digest = count_and_digest(sequences)
    memory = held_kb(sequences)
    timings = time_sequences(sequences, rounds)
    print(
        f"server's per-move sequence (apply → turn_options → to_json every {CHECKPOINT_EVERY}th), median of "
        f"{rounds} rounds, µs per move; outcomes digest {digest}"
    )
    for group, figures in timings.items():
        moves = sum(len(s.moves) for s in sequences if group in ("all moves", s.group))
        print(
            f"  {group:11} sequence {figures['sequence']:7.1f} µs   apply {figures['apply']:6.1f}   "
            f"turn_options {figures['turn_options']:6.1f}   to_json {figures['to_json']:6.1f}   "
            f"containers {kept[group]:6.1f}   state {memory[group]:5.1f} KB   ({moves} moves)"
        )


# ---- the server's whole per-action path, and a page's memory (issue 22) ------------------------------


def _server_interval() -> Callable[[State], int]:
    """The server's checkpoint interval (`checkpoint_interval`; 16 in a tree without it)."""
    try:
        from dotfight.server.pages.authority import checkpoint_interval
    except ImportError:
        return lambda state: 16
    return checkpoint_interval


def _store_json() -> Callable[[Any], bytes]:
    """The checkpoint's text as the store writes it: orjson, or stdlib json where orjson is missing."""
    try:
        import orjson
    except ImportError:
        return lambda value: json.dumps(value, separators=(",", ":")).encode()
    return orjson.dumps


# Looked up once, as the server imports them once: an import statement per action (a module lookup
# and its lock, ~1 µs) was timed as part of each tree's path.
checkpoint_every = _server_interval()
json_text = _store_json()


def server_path(state: State, side: str, action: Any) -> tuple[State, list[dict[str, Any]], bytes | None]:
    """One action as the server's event loop works it: `apply`, the events on the wire (crosses coloured,
    the new turn's options on the last, page_view.events_on_the_wire) and the checkpoint's JSON text at
    the server's interval and at the end (authority.checkpoint_of, then the store's orjson)."""
    state, events = apply(state, side, action)
    sent = with_cross_sides(state, events)
    if sent:
        sent[-1] = {**sent[-1], "options": turn_options(state)}
    keep = state.version % checkpoint_every(state) == 0 or state.phase == "over"
    return state, sent, json_text(state.to_json()) if keep else None


def time_server_path(sequences: list[Sequence], rounds: int) -> dict[str, float]:
    """Returns, per group and for all moves, the median over `rounds` of µs per action of `server_path`
    (the collector off while timing)."""
    clock = time.perf_counter_ns
    per_round: dict[str, list[float]] = {}
    gc.collect()
    gc.disable()
    try:
        for _ in range(rounds):
            spent: dict[str, list[int]] = {}
            for sequence in sequences:
                state = sequence.start()
                tally = spent.setdefault(sequence.group, [0, 0])
                for side, action in sequence.moves:
                    start = clock()
                    state, _, _ = server_path(state, side, action)
                    tally[0] += clock() - start
                    tally[1] += 1
            spent["all moves"] = [sum(t[0] for t in spent.values()), sum(t[1] for t in spent.values())]
            for group, (ns, moves) in spent.items():
                per_round.setdefault(group, []).append(ns / 1000.0 / moves)
            gc.collect()
    finally:
        gc.enable()
    return {group: statistics.median(values) for group, values in per_round.items()}


def page_memory(pages: int = 200, snipes: int = 20) -> tuple[float, float]:
    """Returns the KB a quick page's state holds of its own (tracemalloc): set up and joined (its first
    turn's options asked, as a join's snapshot does), and after `snipes` soft snipes on the wire path."""
    rules = RuleSet.preset("quick")

    def joined(seed: int) -> State:
        state = new_page(rules, seed)
        for side, kind in (("blue", "quick_setup"), ("blue", "ready"), ("red", "ready")):
            state, _ = apply(state, side, {"type": kind})
        turn_options(state)
        return state

    def played(seed: int) -> State:
        state = joined(seed)
        for side, action in soft_snipe_moves(state, snipes):
            state, _, _ = server_path(state, side, action)
        return state

    figures = []
    for make in (joined, played):
        make(pages)  # whatever pages share is made outside the measurement
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            kept = [make(seed) for seed in range(pages)]
            gc.collect()
            figures.append((tracemalloc.get_traced_memory()[0] - before) / len(kept) / 1024)
        finally:
            tracemalloc.stop()
        del kept
    return figures[0], figures[1]


def bench_server_path(rounds: int) -> None:
    """Prints µs per action of the server's whole per-action path, and a page's memory."""
    sequences = server_sequences()
    timings = time_server_path(sequences, rounds)
    joined_kb, played_kb = page_memory()
    print(
        f"server's per-action path (apply → with_cross_sides → turn_options → checkpoint JSON at the "
        f"server's interval), median of {rounds} rounds, µs per action"
    )
    print(
        f"  path  soft snipes {timings['soft snipes']:6.1f} µs   "
        f"real pages {timings['real pages']:6.1f} µs   all moves {timings['all moves']:6.1f} µs"
    )
    print(f"  page memory  joined {joined_kb:5.2f} KB   after 20 soft snipes {played_kb:5.2f} KB")


FIGURE = re.compile(
    r"^\s*(?P<kind>snipe|lunge)\s+opened\s+(?P<opened>[\d.]+).*?next\s+(?P<next>[\d.]+).*?warm\s+(?P<warm>[\d.]+)"
)
PAGES = re.compile(
    r"^\s*(?P<name>random legal play|replay of the same logs)[^:]*:\s+(?P<rate>[\d.]+) pages/s"
)
SEQUENCE = re.compile(
    r"^\s*(?P<group>soft snipes|real pages|all moves)\s+sequence\s+(?P<sequence>[\d.]+) µs\s+"
    r"apply\s+(?P<apply>[\d.]+)\s+turn_options\s+(?P<turn_options>[\d.]+)\s+to_json\s+(?P<to_json>[\d.]+)"
    r"\s+containers\s+(?P<containers>[\d.]+)\s+state\s+(?P<state>[\d.]+) KB"
)
DIGEST = re.compile(r"outcomes digest (?P<digest>[0-9a-f]+)")
SERVER_PATH = re.compile(
    r"^\s*path\s+soft snipes\s+(?P<soft>[\d.]+) µs\s+real pages\s+(?P<real>[\d.]+) µs\s+"
    r"all moves\s+(?P<all>[\d.]+) µs"
)
MEMORY = re.compile(
    r"^\s*page memory\s+joined\s+(?P<joined>[\d.]+) KB\s+after 20 soft snipes\s+(?P<played>[\d.]+) KB"
)


PATH_GROUPS = (("soft", "soft snipes"), ("real", "real pages"), ("all", "all moves"))


def run_against(
    other: Path, rounds: int, calls: int, pages: int, sequence_rounds: int, only_sequence: bool
) -> None:
    """Runs this script on this tree's engine and on `other`'s (`--tree`) in alternating subprocesses;
    prints each figure's median over the rounds and the ratio, and checks the outcomes are the same."""
    trees = {"this": TREE, "that": other.resolve()}
    results: dict[str, dict[str, list[float]]] = {"this": {}, "that": {}}
    digests: dict[str, set[str]] = {"this": set(), "that": set()}
    for round_number in range(rounds):
        order = ("that", "this") if round_number % 2 else ("this", "that")
        for which in order:
            command = [
                sys.executable,
                str(Path(__file__).resolve()),
                "--tree",
                str(trees[which]),
                "--calls",
                str(calls),
                "--pages",
                str(pages),
                "--sequence-rounds",
                str(sequence_rounds),
                *(["--only-sequence"] if only_sequence else []),
            ]
            output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
            figures = results[which]
            for line in output.splitlines():
                if match := FIGURE.match(line):
                    for situation in ("opened", "next", "warm"):
                        name = f"{match['kind']} {situation} (µs)"
                        figures.setdefault(name, []).append(float(match[situation]))
                elif match := PAGES.match(line):
                    figures.setdefault(f"{match['name']} (pages/s)", []).append(float(match["rate"]))
                elif match := SEQUENCE.match(line):
                    for part in ("sequence", "apply", "turn_options", "to_json"):
                        name = f"server move, {match['group']}: {part} (µs)"
                        figures.setdefault(name, []).append(float(match[part]))
                    name = f"server move, {match['group']}: containers"
                    figures.setdefault(name, []).append(float(match["containers"]))
                    name = f"server move, {match['group']}: state held (KB)"
                    figures.setdefault(name, []).append(float(match["state"]))
                elif match := SERVER_PATH.match(line):
                    for group, name in PATH_GROUPS:
                        figures.setdefault(f"server path, {name} (µs)", []).append(float(match[group]))
                elif match := MEMORY.match(line):
                    figures.setdefault("page memory, joined (KB)", []).append(float(match["joined"]))
                    figures.setdefault("page memory, 20 soft snipes (KB)", []).append(float(match["played"]))
                if match := DIGEST.search(line):
                    digests[which].add(match["digest"])
    print(f"{rounds} interleaved rounds, median of each figure; ratio = this / that")
    for name, values in results["this"].items():
        mine, theirs = statistics.median(values), statistics.median(results["that"].get(name, [math.nan]))
        print(f"  {name:52} this {mine:8.1f}   that {theirs:8.1f}   ratio {mine / theirs:5.2f}")
    same = digests["this"] == digests["that"] and len(digests["this"]) == 1
    verdict = "the same" if same else "DIFFERENT"
    print(
        f"outcomes (events, options, checkpoints of every move): {verdict} "
        f"(this {sorted(digests['this'])}, that {sorted(digests['that'])})"
    )


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
    parser.add_argument(
        "--sequence-rounds", type=int, default=5, help="rounds of the server's per-move sequence (median)"
    )
    parser.add_argument("--tree", type=Path, help="import the engine from this checkout instead")
    parser.add_argument(
        "--only-sequence", action="store_true", help="time only the server's per-move sequence"
    )
    args = parser.parse_args()
    if args.against is not None:
        run_against(
            args.against, args.rounds, args.calls, args.pages, args.sequence_rounds, args.only_sequence
        )
        return
    if args.only_sequence:
        bench_server_sequence(args.sequence_rounds)
        bench_server_path(args.sequence_rounds)
        return
    state = mid_game_classic()
    if args.profile:
        profile_resolution(state, args.calls)
        profile_replay(args.pages)
        return
    bench_server_sequence(args.sequence_rounds)
    bench_server_path(args.sequence_rounds)
    bench_resolution(state, args.calls)
    bench_questions(args.calls)
    bench_pages(args.pages)


if __name__ == "__main__":
    main()
