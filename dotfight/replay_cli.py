"""`dotfight replay LOG.json`: rebuilds a saved page from its log and prints its events or final state.

The log file is `{"rules": {...}, "seed": <int or 32 hex digits>, "actions": [{"side", "action"}, ...]}`.
Exit status: 0 when every action applied, 1 when an action was refused (the valid prefix is still
printed), 2 when the file itself cannot be read.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from dotfight.engine import Replay, RuleSet
from dotfight.engine.rng import seed_from_hex


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Registers the replay subcommand's arguments."""
    parser.add_argument("log", help="page log JSON: {rules, seed, actions: [{side, action}]}; '-' is stdin")
    parser.add_argument(
        "--show",
        choices=("events", "snapshot", "both"),
        default="both",
        help="print each action's events (one JSON line per action), the final snapshot, or both",
    )


def run(args: argparse.Namespace) -> int:
    """Replays the log named in `args` and prints what was asked; returns the exit status."""
    try:
        log = _read_log(args.log)
        rules = RuleSet.from_json(log.get("rules", {}))
        seed = _seed(log.get("seed"))
        actions = log.get("actions")
        if not isinstance(actions, list):
            raise ValueError("the log's 'actions' must be a list")
    except (OSError, ValueError) as problem:
        print(f"dotfight replay: cannot read {args.log}: {problem}", file=sys.stderr)
        return 2
    replay = Replay(rules, seed, actions)
    out: TextIO = sys.stdout
    if args.show in ("events", "both"):
        for number, events in enumerate(replay.events, start=1):
            out.write(json.dumps({"version": number, "events": events}, allow_nan=False) + "\n")
    if args.show in ("snapshot", "both"):
        out.write(json.dumps(replay.state.snapshot(), allow_nan=False, indent=2) + "\n")
    if replay.error is not None:
        refusal = replay.error
        where = f"action {replay.valid + 1} refused ({refusal.code}/{refusal.reason})"
        print(f"dotfight replay: {where}: {refusal.message}", file=sys.stderr)
        return 1
    return 0


def _read_log(path: str) -> dict[str, Any]:
    text = sys.stdin.read() if path == "-" else open(path, encoding="utf-8").read()  # noqa: SIM115
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("a page log must be a JSON object")
    return data


def _seed(value: object) -> int:
    if isinstance(value, str):
        return seed_from_hex(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**128:
        raise ValueError(f"seed must be an int in [0, 2**128) or 32 hex digits, got {value!r}")
    return value
