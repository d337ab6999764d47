"""Regenerates the golden pages in tests/engine/golden/ — on purpose only, never from a test.

Run from the repository root: `python3 -m tests.engine.make_golden`. Each page is played to the end by
the fixed-seed random legal player of `strategies` and stored as the log a saved page keeps:
`{format: 1, rules, seed (hex), actions: [{side, action}], events: [[...]...], final: <to_json>}`.
Regenerating changes what test_golden.py holds the engine to, so do it only when the rules change on
purpose, and say so in the commit.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dotfight.engine import RuleSet
from dotfight.engine.rng import seed_to_hex
from tests.engine.strategies import play_page

GOLDEN_DIR = Path(__file__).parent / "golden"
FORMAT = 1


@dataclass(frozen=True)
class GoldenSpec:
    """One golden page: its file name, rules, page seed and the random player's seed."""

    name: str
    rules: RuleSet
    seed: int
    player_seed: int
    quick_setup_chance: float


def specs() -> list[GoldenSpec]:
    """The pages kept: one per preset, and a custom one that also moves a few non-size numbers."""
    custom = RuleSet.preset("custom", bases_per_side=2, soldiers_per_base=6).replace(
        wildness=0.2, man_loss=0.1, send_max=3, last_stand_at=3
    )
    return [
        # Classic and Dawood's own draw their bases by hand; quick and custom use the quick setup. The
        # player seeds are picked so that, between them, the pages reach every event, cause and bonus.
        GoldenSpec("classic", RuleSet.preset("classic"), 0x0123456789ABCDEF0123456789ABCDEF, 11, 0.0),
        GoldenSpec("quick", RuleSet.preset("quick"), 0xFEDCBA9876543210FEDCBA9876543210, 108, 1.0),
        GoldenSpec("dawood", RuleSet.preset("dawood"), 0x00000000000000000000000000000005, 33, 0.0),
        GoldenSpec("custom", custom, 2**128 - 1, 65, 1.0),
    ]


def golden_page(spec: GoldenSpec) -> dict[str, Any]:
    """Plays the spec's page to the end and returns it in the stored log format."""
    page = play_page(
        spec.rules,
        spec.seed,
        random.Random(spec.player_seed),
        max_actions=3000,
        quick_setup_chance=spec.quick_setup_chance,
    )
    record = {
        "format": FORMAT,
        "rules": spec.rules.to_json(),
        "seed": seed_to_hex(spec.seed),
        "actions": page.log,
        "events": page.events,
        "final": page.final.to_json(),
    }
    # Normalised through JSON text so the file holds exactly what a reader gets back.
    normalised: dict[str, Any] = json.loads(json.dumps(record, allow_nan=False))
    return normalised


def render(record: dict[str, Any]) -> str:
    """Compact JSON with one action, one action's events, and the final state each on a line of their
    own, so a regenerated file diffs action by action and stays small."""

    def dump(value: Any) -> str:
        return json.dumps(value, allow_nan=False, separators=(",", ":"))

    def block(items: list[Any]) -> str:
        return "[\n" + ",\n".join(dump(item) for item in items) + "\n]"

    head = ",\n".join(f"{dump(key)}:{dump(record[key])}" for key in ("format", "rules", "seed"))
    return (
        f"{{{head},\n"
        f'"actions":{block(record["actions"])},\n'
        f'"events":{block(record["events"])},\n'
        f'"final":{dump(record["final"])}\n}}\n'
    )


def main() -> None:
    """Writes every golden page and prints a one-line summary of each."""
    GOLDEN_DIR.mkdir(exist_ok=True)
    for spec in specs():
        record = golden_page(spec)
        path = GOLDEN_DIR / f"{spec.name}.json"
        path.write_text(render(record))
        final = record["final"]
        print(
            f"{path.name}: {len(record['actions'])} actions, winner {final['winner']} "
            f"({final['end_reason']}), {path.stat().st_size // 1024} KiB"
        )


if __name__ == "__main__":
    main()
