"""`dotfight replay LOG`: rebuilds a saved page from its log, checks it, and prints its events or state.

LOG is a file, `-` for stdin, or the address of a finished page's log on a server
(`https://…/api/pages/{id}/log`; the server answers a long log in pages, which are followed by their
`next` cursor and read whole). Two shapes are read:

- the server's page log: `{"rules", "seed", "seed_sha256", "entries": [{"version", "side", "action",
  "events"}, …]}` (the seed is revealed once the page is over);
- a plain log: `{"rules", "seed", "actions": [{"side", "action"}, …]}`, optionally with the recorded
  `"events": [[…], …]}` (the golden pages' shape).

Checks, so that anyone can verify every roll of a finished page: the seed matches the SHA-256 the server
showed from the start (when the log carries one), every action applies, and every recorded event is
reproduced exactly. Exit status: 0 when everything checks, 1 when something does not (the valid prefix
is still printed), 2 when the log cannot be read.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any, TextIO

from dotfight.engine import Replay, RuleSet
from dotfight.engine.errors import quoted
from dotfight.engine.query import with_cross_sides
from dotfight.engine.rng import seed_from_hex, seed_to_hex


@dataclass(frozen=True)
class PageLog:
    """A page log in either shape, read into the parts a replay needs."""

    rules: RuleSet
    seed: int
    actions: list[dict[str, Any]]
    recorded: list[Any] | None  # the events stored with each action, when the log has them
    seed_sha256: str | None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Registers the replay subcommand's arguments."""
    parser.add_argument(
        "log",
        help="a page log: a JSON file, '-' for stdin, or a server's https://…/api/pages/{id}/log address",
    )
    parser.add_argument(
        "--show",
        choices=("events", "snapshot", "both", "none"),
        default="both",
        help="print each action's events (one JSON line per action), the final snapshot, both, or none",
    )


def run(args: argparse.Namespace) -> int:
    """Replays and checks the log named in `args`, prints what was asked; returns the exit status."""
    try:
        log = parse_log(_read(args.log))
    except (OSError, ValueError) as problem:
        print(f"dotfight replay: cannot read {args.log}: {problem}", file=sys.stderr)
        return 2
    replay = Replay(log.rules, log.seed, log.actions)
    out: TextIO = sys.stdout
    if args.show in ("events", "both"):
        for number, events in enumerate(replay.events, start=1):
            out.write(json.dumps({"version": number, "events": events}, allow_nan=False) + "\n")
    if args.show in ("snapshot", "both"):
        out.write(json.dumps(replay.state.snapshot(), allow_nan=False, indent=2) + "\n")
    problems = check(log, replay)
    for found in problems:
        print(f"dotfight replay: {found}", file=sys.stderr)
    if problems:
        return 1
    checked = ["every action applies"]
    if log.seed_sha256 is not None:
        checked.insert(0, "the seed matches its SHA-256")
    if log.recorded is not None:
        checked.append("every recorded event is reproduced")
    print(f"dotfight replay: {len(log.actions)} actions; {', '.join(checked)}", file=sys.stderr)
    return 0


def check(log: PageLog, replay: Replay) -> list[str]:
    """Returns what does not check out in a replayed log (empty when everything does)."""
    problems: list[str] = []
    if log.seed_sha256 is not None:
        digest = hashlib.sha256(seed_to_hex(log.seed).encode("ascii")).hexdigest()
        if digest != log.seed_sha256.lower():
            problems.append(f"the seed's SHA-256 is {digest}, not the {log.seed_sha256} shown for the page")
    if replay.error is not None:
        refusal = replay.error
        problems.append(
            f"action {replay.valid + 1} refused ({refusal.code}/{refusal.reason}): {refusal.message}"
        )
    if log.recorded is not None:
        for number, (stored, replayed) in enumerate(zip(log.recorded, replay.events, strict=False), start=1):
            # A served log names each cross's side on the way out (engine.query.with_cross_sides): it is
            # checked against the replayed page's own crosses; a golden page's log is as the engine wrote.
            if stored != replayed and stored != with_cross_sides(replay.state, replayed):
                problems.append(f"action {number}: the recorded events differ from the replay's")
                break
    return problems


def parse_log(data: object) -> PageLog:
    """Reads a page log of either shape, refusing anything else with ValueError.

    >>> log = parse_log({"rules": {"preset": "quick"}, "seed": 7, "actions": [{"side": "blue",
    ...     "action": {"type": "quick_setup"}}]})
    >>> log.rules.bases_per_side, log.seed, len(log.actions), log.recorded
    (3, 7, 1, None)
    """
    if not isinstance(data, dict):
        raise ValueError("a page log must be a JSON object")
    rules = RuleSet.from_json(data.get("rules", {}))
    if data.get("seed") is None:
        raise ValueError("the log has no seed: the server reveals it once the page is over")
    seed = _seed(data["seed"])
    commitment = data.get("seed_sha256")
    if commitment is not None and not isinstance(commitment, str):
        raise ValueError(f"seed_sha256 must be a hex string, got {quoted(commitment)}")
    if "entries" in data:
        entries = data["entries"]
        if not isinstance(entries, list) or not all(isinstance(entry, dict) for entry in entries):
            raise ValueError("the log's 'entries' must be a list of objects")
        actions = [{"side": entry.get("side"), "action": entry.get("action")} for entry in entries]
        recorded: list[Any] | None = [entry.get("events") for entry in entries]
    else:
        listed = data.get("actions")
        if not isinstance(listed, list):
            raise ValueError("the log needs 'entries' (a server's log) or 'actions' (a plain log)")
        actions = listed
        recorded = data.get("events")
        if recorded is not None and not isinstance(recorded, list):
            raise ValueError("the log's 'events' must be a list, one list of events per action")
    return PageLog(rules, seed, actions, recorded, commitment)


def _read(source: str) -> object:
    if source.startswith(("http://", "https://")):
        return _read_pages(source)
    if source == "-":
        return json.loads(sys.stdin.read())
    with open(source, encoding="utf-8") as file:
        return json.load(file)


def _fetch(address: str) -> object:
    with urllib.request.urlopen(address, timeout=30) as answer:
        return json.loads(answer.read().decode("utf-8"))


def _read_pages(address: str) -> object:
    """Reads a server's page log whole: the first answer, then each following one its `next` names
    (`?from=<next>`), their entries joined in order."""
    first = _fetch(address)
    if not isinstance(first, dict) or first.get("next") is None:
        return first
    entries = first.get("entries")
    if not isinstance(entries, list):
        raise ValueError("the log's 'entries' must be a list of objects")
    parts = urllib.parse.urlsplit(address)
    query = [(key, value) for key, value in urllib.parse.parse_qsl(parts.query) if key != "from"]
    cursor, previous = first["next"], 0
    while cursor is not None:
        if isinstance(cursor, bool) or not isinstance(cursor, int) or cursor <= previous:
            raise ValueError(f"the log's 'next' must move forward, got {quoted(cursor)}")
        previous = cursor
        following = urllib.parse.urlencode([*query, ("from", cursor)])
        part = _fetch(urllib.parse.urlunsplit(parts._replace(query=following)))
        if not isinstance(part, dict) or not isinstance(part.get("entries"), list):
            raise ValueError("a page of the log must be an object with 'entries'")
        entries.extend(part["entries"])
        cursor = part.get("next")
        # The page may have ended while it was read: the last answer tells the seed.
        first["seed"] = part.get("seed", first.get("seed"))
    first["next"] = None
    return first


def _seed(value: object) -> int:
    if isinstance(value, str):
        return seed_from_hex(value.zfill(32))
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**128:
        raise ValueError(f"seed must be an int in [0, 2**128) or 32 hex digits, got {quoted(value)}")
    return value
