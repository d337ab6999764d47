"""Summarises py-spy's collapsed stacks of a server (`benchmarks/server.py --profile DIR`).

    python3 benchmarks/profile_summary.py DIR/01-dotfight-1234.txt [--per-action N]

Prints, for each thread kind (the event loop, the database writer, the engine and reader pools), its
share of all samples, and inside each the share of samples (inclusive: the marker anywhere in the
stack) that pass through the markers below: the ORM, SQLAlchemy's statement building, sqlite's own
execute and commit, the duplicate move-id read, the engine, turn options, JSON, pydantic, WebSocket
sends. Then the leaf functions that hold the most samples. Samples are CPU (py-spy leaves idle threads
out), at 100 Hz: with `--per-action N` (actions made during the profile) each share is also given in
microseconds per action.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

RATE_HZ = 100
# (label, substring of a frame) — a sample counts for a marker when any frame of it holds the substring.
MARKERS = [
    ("SQLAlchemy ORM (session, unit of work, ORM compile)", "sqlalchemy/orm/"),
    ("SQLAlchemy (all)", "sqlalchemy/"),
    ("sqlite3 cursor execute (driver + SQLite)", "do_execute"),
    ("commit (fsync)", "_commit_impl"),
    ("duplicate move_id SELECT", "action_by_move_id"),
    ("page row UPDATE (ORM, before issue 12)", "append_action"),
    ("log INSERT (ORM add_action + flush, before issue 12)", "Session.flush"),
    ("page row UPDATE + log INSERT (Core, appends.move_on)", "move_on (dotfight/store/appends.py"),
    ("private state checkpoint (appends.save_state)", "save_state (dotfight/store/appends.py"),
    ("engine apply", "dotfight/engine/"),
    ("turn_options", "turn_options"),
    ("state to_json (cache)", "State.to_json"),
    ("json dumps/loads", "json/"),
    ("pydantic", "pydantic"),
    ("WebSocket send (uvicorn)", "send (uvicorn/protocols/websockets"),
    ("uvicorn WebSocket protocol", "uvicorn/protocols/websockets"),
    ("websockets library", "websockets/"),
    ("starlette", "starlette/"),
    ("asyncio / uvloop machinery", "asyncio/"),
]


def thread_kind(name: str) -> str:
    """Returns the kind of a thread from py-spy's label (its Python name)."""
    for prefix, kind in (
        ("dotfight-writer", "writer"),
        ("floor-writer", "writer"),
        ("dotfight-engine", "engine pool"),
        ("dotfight-read", "reader pool"),
        ("MainThread", "event loop"),
    ):
        if prefix in name:
            return kind
    return "other"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("files", type=Path, nargs="+")
    parser.add_argument("--per-action", type=int, default=0, help="actions made while sampled")
    parser.add_argument("--leaves", type=int, default=12, help="leaf functions listed per thread kind")
    args = parser.parse_args()
    per_thread: Counter[str] = Counter()
    marks: dict[str, Counter[str]] = {}
    leaves: dict[str, Counter[str]] = {}
    for path in args.files:
        for line in path.read_text().splitlines():
            stack, _, count_text = line.rpartition(" ")
            if not stack:
                continue
            count = int(count_text)
            frames = stack.split(";")
            kind = thread_kind(frames[0])
            per_thread[kind] += count
            for label, needle in MARKERS:
                if needle in stack:
                    marks.setdefault(kind, Counter())[label] += count
            leaf = (
                re.sub(r" \(.*?:\d+\)$", "", frames[-1]) + " (" + frames[-1].rsplit("(", 1)[-1].split(":")[0]
            )
            leaves.setdefault(kind, Counter())[leaf + ")"] += count
    total = sum(per_thread.values())
    print(f"{total} samples ({total / RATE_HZ:.1f} CPU seconds at {RATE_HZ} Hz)")

    def cost(samples: int) -> str:
        share = f"{samples / total:6.1%} of all"
        if args.per_action:
            share += f", {samples / RATE_HZ / args.per_action * 1e6:7.0f} µs/action"
        return share

    for kind, samples in per_thread.most_common():
        print(f"\n== {kind}: {cost(samples)}")
        for label, count in marks.get(kind, Counter()).most_common():
            print(f"   {count / samples:6.1%} of thread  {label:52} {cost(count)}")
        print("   leaves:")
        for leaf, count in leaves[kind].most_common(args.leaves):
            print(f"   {count / samples:6.1%}  {leaf}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
