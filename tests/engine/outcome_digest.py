"""One digest of everything the engine says over a few hundred random pages: every event (as the wire
sends them, crosses coloured), every turn's options and every state's private JSON, byte for byte.

A speed-up of the engine must leave this digest as it is: `test_same_outcomes.py` holds it to the value
`main`'s engine gave before issue 22's engine work (computed by running this module in a `git archive`
copy of that tree: `python3 -m tests.engine.outcome_digest`).
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any

from dotfight.engine import RuleSet, apply, new_page, turn_options
from dotfight.engine.query import with_cross_sides
from tests.engine.strategies import legal_action

# (preset, pages): quick pages dominate, as in play; classic and dawood add hand-drawn bases, last
# stands, convoys and longer chains. The first pages of each preset are the default run's share.
PAGES: tuple[tuple[str, int], ...] = (("quick", 200), ("classic", 30), ("dawood", 10))
FEW_PAGES: tuple[tuple[str, int], ...] = (("quick", 40), ("classic", 6), ("dawood", 2))
MAX_ACTIONS = 400


def page_digest(preset: str, seed: int, hasher: Any) -> int:
    """Plays one random legal page, feeding every outcome into `hasher`; returns the actions made."""
    rng = random.Random(seed * 7919 + len(preset))
    state = new_page(RuleSet.preset(preset), seed)
    actions = 0
    while state.actor is not None and actions < MAX_ACTIONS:
        side = state.actor
        action = legal_action(state, rng, quick_setup_chance=0.5)
        state, events = apply(state, side, action)
        actions += 1
        outcome = [with_cross_sides(state, events), turn_options(state), state.to_json()]
        hasher.update(json.dumps(outcome, allow_nan=False).encode())
    return actions


def outcome_digest(pages: tuple[tuple[str, int], ...] = PAGES) -> str:
    """Returns the sha256 (hex) of every outcome of the random pages (`PAGES` unless told)."""
    hasher = hashlib.sha256()
    for preset, count in pages:
        for seed in range(count):
            page_digest(preset, seed, hasher)
    return hasher.hexdigest()


if __name__ == "__main__":
    print(outcome_digest(FEW_PAGES), outcome_digest())
