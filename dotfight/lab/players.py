"""Reference players for the lab's ladder: a novice model and a random legal player.

They stand for people, not for Dawood-bot's strengths, and anchor the ladder's scale (docs/LAB.md,
"The ladder"):

- **novice**: what a new player does on the first pages. He accepts the jotted arrangement, never sends,
  and each flick aims straight at a nearby enemy — the closest (shooter, target) pairs, one of the few
  nearest drawn at random — pulling hard enough to reach a little past him, with a person's aim error
  (`AIM_ERROR` rad) and power error (`POWER_ERROR` of full pull). He lunges at a man in the open when the
  run would cross no wall (the wall of the base he leaves aside) and stay on the page, and snipes
  otherwise: he never lunges through a base. A chain's next link is the same choice with the same
  lunger, and he stops when no such lunge is there.
- **random**: a random legal player: a random soldier, kind, direction and pull, a pending chain run on
  or stopped at a coin's toss; it sends nothing and keeps the jotted arrangement.

Both draw their bases where Dawood-bot draws them (the bases are not what these players model), and
both are deterministic given their seed and the page, like Dawood-bot (their luck is hashed from
(seed, side, version)).
"""

from __future__ import annotations

import math
import random
from typing import Any

from dotfight.bot.board import Board
from dotfight.bot.dawood import DEPTH
from dotfight.bot.layout import next_base
from dotfight.bot.luck import derive_seed, private_random
from dotfight.bot.rules import legal, power_for_reach, reach
from dotfight.engine import RuleSet, State
from dotfight.engine.values import Base, Soldier

Action = dict[str, Any]

# A person's hand by touch: about 3° of aim (a finger's width at a full pull) ...
AIM_ERROR = 0.05
# ... and a tenth of the full pull (30 units of 300) in how hard.
POWER_ERROR = 0.1
# How many of the nearest (shooter, target) pairs the novice picks among: "a nearby enemy", not always
# the very nearest.
NEARBY = 3
# How far past the target the novice means his line to carry (dot radii).
CARRY = 3.0
# Tries at a random legal flick before the random player gives up the turn (stop) or falls back.
RANDOM_TRIES = 50


def _side(state: State) -> str:
    side = state.actor
    if side is None:
        raise ValueError("the page is over: nobody acts")
    return side


def _setup(state: State, side: str, seed: int) -> Action | None:
    """The setup action both reference players make (Dawood-bot's bases, the jotted arrangement), or
    None in play."""
    board = Board.of(state)
    if board.phase == "bases":
        return next_base(state, board, side, derive_seed(seed, side, "bases") % 2**63, DEPTH)
    if board.phase == "positioning":
        return {"type": "ready"}
    return None


def _vector(rules: RuleSet, angle: float, power: float) -> list[float]:
    length = max(1.5, min(1.0, max(0.0, power)) * rules.pull_max)
    return [length * math.cos(angle), length * math.sin(angle)]


def _crosses_wall(base: Base, ox: float, oy: float, ux: float, uy: float, length: float) -> bool:
    """Whether a straight run of `length` from (ox, oy) along the unit vector (ux, uy) crosses the
    base's wall (goes in, comes out, or ends inside)."""
    cx, cy = base.x - ox, base.y - oy
    along = max(0.0, min(length, cx * ux + cy * uy))
    nearest = math.hypot(cx - along * ux, cy - along * uy)
    return nearest <= base.r


class NoviceBot:
    """The novice model: straight at a nearby enemy, a person's aim and power error, no lunge through a
    base, no sends, the jotted arrangement (module docstring)."""

    def __init__(self, seed: int = 0, aim_error: float = AIM_ERROR, power_error: float = POWER_ERROR):
        self.seed = int(seed)
        self.aim_error = aim_error
        self.power_error = power_error

    def choose(self, state: State, budget_s: float | None = None) -> Action:
        """The novice's action for `state.actor` now (`budget_s` is ignored: he thinks no longer)."""
        side = _side(state)
        setup = _setup(state, side, self.seed)
        if setup is not None:
            return setup
        turn = state.turn
        rng = private_random(self.seed, side, state.version, "novice")
        chain = turn.chain.soldier if turn is not None and turn.chain is not None else None
        shooters = [state.soldier(chain)] if chain else [state.soldier(s) for s in state.flickable(side)]  # type: ignore[arg-type]
        enemy = "red" if side == "blue" else "blue"
        targets = state.living(enemy)  # type: ignore[arg-type]
        pairs = sorted(
            ((math.hypot(t.x - s.x, t.y - s.y), s, t) for s in shooters for t in targets),
            key=lambda pair: pair[0],
        )
        if chain:  # a chain's next link: only a lunge through no wall, else stop
            for distance, shooter, target in pairs:
                action = self._lunge(state, shooter, target, distance, rng)
                if action is not None and legal(state, side, action):
                    return action
            return {"type": "stop"}
        # "A nearby enemy": one of the few nearest pairs, the rest (nearest first) should it be refused.
        pick = rng.randrange(min(NEARBY, len(pairs))) if pairs else 0
        for distance, shooter, target in pairs[pick : pick + 1] + pairs:
            action = self._lunge(state, shooter, target, distance, rng) or self._snipe(
                state, shooter, target, distance, rng
            )
            if legal(state, side, action):
                return action
        return {"type": "stop"}

    def _power(self, rules: RuleSet, distance: float) -> float:
        wanted = power_for_reach(rules, distance + CARRY * rules.dot_radius)
        return 1.0 if wanted is None else wanted

    def _angle(self, shooter: Soldier, target: Soldier) -> float:
        return math.atan2(target.y - shooter.y, target.x - shooter.x)

    def _snipe(
        self, state: State, shooter: Soldier, target: Soldier, distance: float, rng: random.Random
    ) -> Action:
        rules = state.rules
        angle = self._angle(shooter, target) + rng.gauss(0.0, self.aim_error)
        power = self._power(rules, distance) + rng.gauss(0.0, self.power_error)
        return {
            "type": "flick",
            "soldier": shooter.id,
            "kind": "snipe",
            "vector": _vector(rules, angle, power),
        }

    def _lunge(
        self, state: State, shooter: Soldier, target: Soldier, distance: float, rng: random.Random
    ) -> Action | None:
        """The lunge at `target` when its whole run (as the novice means it) crosses no wall and stays
        on the page; else None. The errors of his hand are drawn after he has decided."""
        rules = state.rules
        angle = self._angle(shooter, target)
        power = self._power(rules, distance)
        run = reach(rules, power)
        ux, uy = math.cos(angle), math.sin(angle)
        ex, ey = shooter.x + run * ux, shooter.y + run * uy
        if not (0.0 <= ex <= rules.page_width and 0.0 <= ey <= rules.page_height):
            return None
        home = state.base_at(shooter.x, shooter.y)
        for base in state.bases:
            if base is not home and _crosses_wall(base, shooter.x, shooter.y, ux, uy, run):
                return None
        angle += rng.gauss(0.0, self.aim_error)
        power += rng.gauss(0.0, self.power_error)
        return {
            "type": "flick",
            "soldier": shooter.id,
            "kind": "lunge",
            "vector": _vector(rules, angle, power),
        }


class RandomBot:
    """A random legal player (module docstring)."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = int(seed)

    def choose(self, state: State, budget_s: float | None = None) -> Action:
        """A random legal action for `state.actor` now."""
        side = _side(state)
        setup = _setup(state, side, self.seed)
        if setup is not None:
            return setup
        rng = private_random(self.seed, side, state.version, "random")
        turn = state.turn
        chain = turn.chain.soldier if turn is not None and turn.chain is not None else None
        if chain is not None and rng.random() < 0.5:
            return {"type": "stop"}
        shooters = [chain] if chain else list(state.flickable(side))  # type: ignore[arg-type]
        for _ in range(RANDOM_TRIES):
            kind = "lunge" if chain else rng.choice(("snipe", "lunge"))
            vector = _vector(state.rules, rng.uniform(-math.pi, math.pi), rng.random())
            action = {"type": "flick", "soldier": rng.choice(shooters), "kind": kind, "vector": vector}
            if legal(state, side, action):
                return action
        return {"type": "stop"}
