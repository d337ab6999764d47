"""Rebuilding a page from its log: `(rules, seed, actions)` gives back the same states and events."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .errors import EngineError, MalformedAction
from .reducer import apply
from .rules import RuleSet
from .state import State, new_page
from .values import Event


class Replay:
    """Applies a log of `{"side", "action"}` entries in order, stopping at the first refused one.

    `state` is the page after the valid prefix, `events` the events of each applied action, `valid` how
    many were applied, `error` the refusal of the first bad entry (or None), `states(i)` the page after
    i actions.

    >>> from dotfight.engine import Replay, RuleSet
    >>> log = [
    ...     {"side": "blue", "action": {"type": "quick_setup"}},
    ...     {"side": "blue", "action": {"type": "ready"}},
    ...     {"side": "blue", "action": {"type": "ready"}},  # red's move: refused, the replay stops
    ...     {"side": "red", "action": {"type": "ready"}},
    ... ]
    >>> replay = Replay(RuleSet.preset("quick"), 7, log)
    >>> replay.valid, replay.state.phase, replay.state.actor
    (2, 'positioning', 'red')
    >>> replay.error.code, replay.error.reason
    ('not_your_turn', 'not_your_turn')
    >>> [len(events) for events in replay.events]
    [7, 1]
    >>> replay.states(0).phase, replay.states(2) is replay.state
    ('bases', True)
    """

    def __init__(self, rules: RuleSet, seed: int, actions: Iterable[Any]) -> None:
        state = new_page(rules, seed)
        self._states: list[State] = [state]
        self.events: list[list[Event]] = []
        self.error: EngineError | None = None
        for number, entry in enumerate(actions):
            try:
                if not isinstance(entry, dict) or set(entry) != {"side", "action"}:
                    raise MalformedAction("bad_log_entry", f"log entry {number} must be {{side, action}}")
                state, events = apply(state, entry["side"], entry["action"])
            except EngineError as refusal:
                self.error = refusal
                break
            self._states.append(state)
            self.events.append(events)
        self.state = state
        self.valid = len(self.events)

    def states(self, index: int) -> State:
        """Returns the page after `index` applied actions (0 is the blank page)."""
        return self._states[index]
