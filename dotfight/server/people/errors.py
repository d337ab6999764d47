"""The people model's refusals: the engine's refusal shape (`code`, `reason`, `message`), carrying no HTTP.

They subclass `EngineError` so the server turns them into its API error the one way it turns the engine's
(the code passed through, the reason in `error.reason`); they are not the rules' refusals.
"""

from __future__ import annotations

from dotfight.engine import EngineError


class PeopleError(EngineError):
    """A refusal of the people model: `code` (stable, the API's), `reason` (snake_case detail), `message`.

    >>> PeopleError("bad_request", "bad_clock", "clock: not an object").to_json()
    {'code': 'bad_request', 'reason': 'bad_clock', 'message': 'clock: not an object'}
    >>> isinstance(PeopleError("bad_request", "bad_clock", "clock: not an object"), ValueError)
    True
    """
