"""The engine's errors: one base type with a stable `code` and `reason`, told apart by kind.

`MalformedAction` means the input is not an action at all (wrong shape, wrong types, NaN, unknown ids);
`IllegalAction` means a well-formed action the rules forbid right now; `RuleSetError` means a rule
parameter that makes no sense. All of them are `ValueError`s, so callers that only know Python still
catch them.

>>> from dotfight.engine import EngineError, RuleSet, apply, new_page
>>> try:
...     apply(new_page(RuleSet.preset("quick"), seed=7), "blue", {"type": "jump"})
... except EngineError as refusal:
...     print(type(refusal).__name__, refusal.code, refusal.reason)
MalformedAction bad_request unknown_action
"""

from __future__ import annotations

import reprlib
from typing import Final

BAD_REQUEST: Final = "bad_request"
NOT_YOUR_TURN: Final = "not_your_turn"
ILLEGAL_ACTION: Final = "illegal_action"
GAME_OVER: Final = "game_over"


# Refused input is quoted in messages, but only so much of it: a message stays short whatever was sent.
_QUOTE = reprlib.Repr()  # (keyword arguments only from Python 3.12 on)
_QUOTE.maxstring = _QUOTE.maxother = 60
_QUOTE.maxlist = _QUOTE.maxdict = _QUOTE.maxtuple = 6
_QUOTE.maxlevel = 3
_QUOTE.maxlong = 40


def quoted(value: object) -> str:
    """Returns a short repr of refused input for an error message, cut with '...' when long.

    >>> quoted("b1s1")
    "'b1s1'"
    >>> len(quoted("x" * 100_000)) <= 60
    True
    """
    return _QUOTE.repr(value)


class EngineError(ValueError):
    """Base of every refusal: `code` is the wire error code, `reason` a stable snake_case detail."""

    def __init__(self, code: str, reason: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message

    def to_json(self) -> dict[str, str]:
        """Returns the error as `{code, reason, message}` for the wire.

        >>> IllegalAction("soldier_dead", "flick: b1s1 is crossed out").to_json()
        {'code': 'illegal_action', 'reason': 'soldier_dead', 'message': 'flick: b1s1 is crossed out'}
        """
        return {"code": self.code, "reason": self.reason, "message": self.message}


class MalformedAction(EngineError):
    """The input is not a well-formed action (code `bad_request`)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(BAD_REQUEST, reason, message)


class IllegalAction(EngineError):
    """A well-formed action the rules forbid now (`not_your_turn`, `illegal_action` or `game_over`)."""

    def __init__(self, reason: str, message: str, code: str = ILLEGAL_ACTION) -> None:
        super().__init__(code, reason, message)


class RuleSetError(EngineError):
    """A rule parameter that makes no sense; names the field and the value (code `bad_request`).

    >>> refusal = RuleSetError("send_max", -1, "must not be negative")
    >>> refusal.field, refusal.value, refusal.reason
    ('send_max', -1, 'bad_rules')
    >>> refusal.message
    'rule send_max=-1: must not be negative'
    """

    def __init__(self, field: str, value: object, problem: str) -> None:
        super().__init__(BAD_REQUEST, "bad_rules", f"rule {field}={quoted(value)}: {problem}")
        self.field = field
        self.value = value
