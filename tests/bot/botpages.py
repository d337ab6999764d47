"""Shared helpers for the bot tests: pages played bot against bot through the real engine."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dotfight.bot import DawoodBot
from dotfight.engine import RuleSet, State, apply, new_page


@dataclass
class BotPage:
    """A page played by two bots: the final state, every (side, action), and the turns played."""

    final: State
    log: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    turns: int = 0


def play_bots(
    rules: RuleSet,
    seed: int,
    blue: str,
    red: str,
    *,
    max_turns: int = 400,
    policies: tuple[str, str] = ("full", "full"),
) -> BotPage:
    """Plays a page bot against bot; any refused action raises the engine's error (a failed test)."""
    bots = {
        "blue": DawoodBot(blue, seed=seed + 1, policy=policies[0]),
        "red": DawoodBot(red, seed=seed + 2, policy=policies[1]),
    }
    state = new_page(rules, seed)
    page = BotPage(final=state)
    while state.actor is not None and page.turns < max_turns:
        side = state.actor
        action = bots[side].choose(state)
        state, events = apply(state, side, action)
        page.log.append((side, action))
        page.turns += sum(1 for e in events if e["type"] == "turn")
    page.final = state
    return page
