"""Moves that keep the turn — a bonus flick (two with one bullet), a chain's link (lunge again), a send —
found on seeded Quick pages played at random by the engine's own turn options, for the tests that the
server and the browser carry what the page allows mid-turn."""

from __future__ import annotations

import math
import random
from typing import Any

from dotfight.engine import RuleSet, State, apply, new_page, turn_options
from tests.support.pages import SETUP_MOVES

Move = tuple[str, dict[str, Any]]
KINDS = ("bonus", "link", "send")
SETUP: list[Move] = list(SETUP_MOVES)


def kept_turn(after: State, events: list[dict[str, Any]], action: dict[str, Any]) -> str | None:
    """Which move kept the turn: "send", "bonus" or "link"; None when the turn passed or the page ended."""
    if after.phase != "play" or any(event["type"] == "turn" for event in events):
        return None
    if action["type"] == "send":
        return "send"
    if any(event["type"] == "bonus" and event.get("reason") == "two_with_one_bullet" for event in events):
        return "bonus"
    if after.turn is not None and after.turn.chain is not None:
        return "link"
    return None


def random_move(options: dict[str, Any], rng: random.Random, send_chance: float) -> dict[str, Any]:
    """A move the options allow: a send (of the men who may walk) with `send_chance`, else a flick."""
    send = options["send"]
    if send and rng.random() < send_chance:
        source = rng.choice(list(send["from"]))
        men = send["men"][source][: rng.randint(1, send["max"])]
        return {"type": "send", "from": source, "to": rng.choice(send["from"][source]), "soldiers": men}
    angle, pull = rng.uniform(0, 2 * math.pi), rng.uniform(60, 400)
    return {
        "type": "flick",
        "soldier": rng.choice(options["flickable"]),
        "kind": rng.choice(options["kinds"]),
        "vector": [round(math.cos(angle) * pull, 1), round(math.sin(angle) * pull, 1)],
    }


def first_move_keeping_the_turn(kind: str) -> tuple[int, list[Move], Move, State]:
    """The first seed whose random page has a move of `kind` keeping the turn: the seed, the moves before
    it (from the setup on), that move, and the page after it."""
    for seed in range(200):
        rng = random.Random(seed)
        state = new_page(RuleSet.preset("quick"), seed)
        moves = list(SETUP)
        for side, action in moves:
            state, _ = apply(state, side, action)
        while state.phase == "play" and len(moves) < 150:
            options = turn_options(state)
            assert options is not None
            side = options["side"]
            action = random_move(options, rng, 1.0 if kind == "send" else 0.1)
            after, events = apply(state, side, action)
            if kept_turn(after, events, action) == kind:
                return seed, moves, (side, action), after
            state = after
            moves.append((side, action))
    raise AssertionError(f"no move of kind {kind!r} keeps the turn on 200 random pages")
