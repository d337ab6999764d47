"""The people model's refusals: `ValueError`s with the API's stable codes, carrying no HTTP."""

from __future__ import annotations


class PeopleError(ValueError):
    """A refusal of the people model: `code` (stable, the API's), `reason` (snake_case detail), `message`.

    >>> PeopleError("bad_request", "bad_clock", "clock: not an object").to_json()
    {'code': 'bad_request', 'reason': 'bad_clock', 'message': 'clock: not an object'}
    """

    def __init__(self, code: str, reason: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message

    def to_json(self) -> dict[str, str]:
        """Returns the refusal as the API's error fields."""
        return {"code": self.code, "reason": self.reason, "message": self.message}
