"""What runs inside Dawood-bot's worker processes: one decision, from a page handed over by value.

The server never thinks for the bot in its own process (the bot's search holds the GIL for as long as
it thinks); it sends `State.to_json()` of the page as the bot may see it (with the bot's own dice
generator, never the page's) to a worker process, which answers the action. This module imports only
the engine and the bot, so a worker starts without the server's web stack.
"""

from __future__ import annotations

from typing import Any

from dotfight.bot import DawoodBot
from dotfight.engine import State


def decide(strength: str, seed: int, hidden_state: dict[str, Any], budget_s: float | None) -> dict[str, Any]:
    """Returns the action Dawood-bot (`strength`, `seed`) plays on the page `hidden_state` (a
    `State.to_json()` whose generator is the bot's), thinking for about `budget_s` seconds at most.

    >>> from dotfight.engine import RuleSet, new_page
    >>> page = new_page(RuleSet.preset("quick"), seed=7).with_rng(11)
    >>> decide("normal", 11, page.to_json(), 1.0)["type"] in ("quick_setup", "draw_base")
    True
    """
    return DawoodBot(strength=strength, seed=seed).choose(State.from_json(hidden_state), budget_s=budget_s)
