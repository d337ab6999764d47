"""The Dotfight rules engine: pure, deterministic, no I/O, no clock.

`new_page(rules, seed)` starts a page; `apply(state, side, action)` returns the next state and the
PROTOCOL.md events; `Replay` rebuilds a page from its log. `refusal`, `changes_nothing`,
`placement_problem`, `flickable`, `send_options` and `turn_options` (engine/query.py) answer rule
questions without playing, and engine/flick.py holds every formula. See docs/ARCHITECTURE.md for the
contract and docs/RULES-NOTES.md for the choices the rule book leaves open.

>>> from dotfight.engine import RuleSet, apply, new_page
>>> page = new_page(RuleSet.preset("quick"), seed=7)
>>> page.phase, page.actor
('bases', 'blue')
>>> page, events = apply(page, "blue", {"type": "quick_setup"})
>>> [event["type"] for event in events]
['base_drawn', 'base_drawn', 'base_drawn', 'base_drawn', 'base_drawn', 'base_drawn', 'phase']
>>> page.phase, page.version, len(page.soldiers)
('positioning', 1, 48)
"""

from .errors import EngineError, IllegalAction, MalformedAction, RuleSetError
from .limits import check_new_page
from .lunge import resolve_lunge
from .query import (
    can_stand,
    changes_nothing,
    flickable,
    placement_problem,
    refusal,
    send_options,
    turn_options,
)
from .reducer import apply
from .replay import Replay
from .rules import PRESETS, RuleSet
from .snipe import resolve_snipe
from .state import State, new_page
from .values import Base, Chain, Convoy, Cross, Event, Ink, Side, Soldier, Turn, other_side

__all__ = [
    "PRESETS",
    "Base",
    "Chain",
    "Convoy",
    "Cross",
    "EngineError",
    "Event",
    "IllegalAction",
    "Ink",
    "MalformedAction",
    "Replay",
    "RuleSet",
    "RuleSetError",
    "Side",
    "Soldier",
    "State",
    "Turn",
    "apply",
    "can_stand",
    "changes_nothing",
    "check_new_page",
    "flickable",
    "new_page",
    "other_side",
    "placement_problem",
    "refusal",
    "resolve_lunge",
    "resolve_snipe",
    "send_options",
    "turn_options",
]
