"""What runs inside the engine's worker processes: the moves of pages whose rules make them expensive.

A page whose rules are outside what a new page may have (`check_new_page`; only pages stored before a
limit existed) may cost seconds and hundreds of MB per move; its work is done here, by value, so that it
can never hold the server's GIL or memory. Refusals come back as values (an engine error's fields),
never as exceptions to unpickle.
"""

from __future__ import annotations

from typing import Any

from dotfight.engine import EngineError, MalformedAction, Replay, RuleSet, State, apply

# ("applied", state JSON, events) or ("refused", malformed?, code, reason, message)
Outcome = tuple[Any, ...]


def apply_by_value(state: dict[str, Any], side: str, action: dict[str, Any]) -> Outcome:
    """Applies one action to the page `state` (a `State.to_json()`).

    >>> from dotfight.engine import new_page
    >>> page = new_page(RuleSet.preset("quick"), seed=7).to_json()
    >>> apply_by_value(page, "blue", {"type": "quick_setup"})[0]
    'applied'
    >>> apply_by_value(page, "red", {"type": "quick_setup"})[:3]
    ('refused', False, 'not_your_turn')
    """
    try:
        new_state, events = apply(State.from_json(state), side, action)
    except EngineError as error:
        return ("refused", isinstance(error, MalformedAction), error.code, error.reason, error.message)
    return ("applied", new_state.to_json(), events)


def replay_by_value(rules: dict[str, Any], seed: int, actions: list[dict[str, Any]]) -> Outcome:
    """Replays a whole log; answers ("applied", state JSON, number applied) or ("refused", ...) with the
    first refusal."""
    replay = Replay(RuleSet.from_json(rules), seed, actions)
    error = replay.error
    if error is not None:
        return ("refused", isinstance(error, MalformedAction), error.code, error.reason, error.message)
    return ("applied", replay.state.to_json(), replay.valid)
