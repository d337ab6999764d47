"""Reading one message a client sent on its page socket: a fast path for the one message that comes with
every move (a well-formed `action`), and pydantic's schemas (`schemas.ClientMessage`) for everything else.

The fast path only ever accepts. orjson reads the text, and a few plain checks take the `action` message
when it is exactly what `ActionMessage` would make of it; anything else (another type, a field missing
or unknown, a number out of range, JSON orjson cannot read or reads differently from Python's `json`) goes
to the slow path, today's stdlib `json` then pydantic, which alone refuses and so says every refusal in
the words it always did. A test feeds both paths the same random and hostile messages
(tests/server/test_client_message.py).
"""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

import orjson
from pydantic import TypeAdapter, ValidationError

from dotfight.engine.actions import SERVER_ONLY_ACTIONS
from dotfight.server.errors import ApiError, describe_validation_error
from dotfight.server.schemas import (
    MAX_JSON_DEPTH,
    MAX_STORED_INT,
    ActionMessage,
    ClientMessage,
    HelloMessage,
    SayMessage,
)


class QuickAction(NamedTuple):
    """An `action` message read by the fast path: what `ActionMessage` would hold, without building a
    pydantic model for it (`model_construct` alone cost about half the fast path)."""

    action: dict[str, Any]
    version: int
    move_id: str


Parsed = HelloMessage | ActionMessage | SayMessage | QuickAction

_client_message: TypeAdapter[Parsed] = TypeAdapter(ClientMessage)

# `MoveId`'s pattern (schemas.py), matched whole: pydantic's regex engine has no `$` before a newline.
_MOVE_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")
# orjson reads an integer past 64 bits as a float (Python's json as an int): a float this large may have
# been written as an integer, so the slow path reads it.
_FLOAT_EXACT_BELOW = 2.0**63
_ACTION_FIELDS = 4  # type, action, version, move_id: all required, no other allowed


class RefusedMessage(Exception):
    """A client message that cannot be read; `hello` tells whether it said it was a hello."""

    def __init__(self, error: ApiError, *, hello: bool) -> None:
        super().__init__(error.message)
        self.error = error
        self.hello = hello


TOO_DEEP = ApiError("bad_request", "the JSON is nested too deeply")
# Text nested deeper than this is refused as too deep before json reads it. json's C parser counts its
# nesting against the interpreter's recursion limit, so past a few hundred levels whether it gave up
# (too deep) or first met the text's own fault (not JSON) hung on how deep the caller's stack was: one
# message was refused in other words from one call site to the next. Far beyond MAX_JSON_DEPTH, far
# below the limit less any stack the server runs on.
DEEPEST_READ = 256
# A JSON string (escapes included): its brackets do not nest.
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_BRACKET = re.compile(r"[\[\]{}]")


def _nested_deeper_than(text: str, limit: int) -> bool:
    """Tells whether the text's brackets, outside its strings, open more than `limit` deep at some
    point (counted as written: a fault elsewhere in the text does not matter)."""
    if text.count("[") + text.count("{") <= limit:
        return False  # every message but a hostile one: too few brackets to nest that deep
    depth = 0
    for bracket in _BRACKET.findall(_STRING.sub("", text)):
        depth = depth + 1 if bracket in "[{" else depth - 1
        if depth > limit:
            return True
    return False


def parse_client_message(text: str) -> Parsed:
    """Reads one client message; raises RefusedMessage (bad_request, with the move_id when one is legible).

    A well-formed action is read by the fast path (`quick_action`); every other message, and every
    refusal, by `parse_slowly`."""
    quick = quick_action(text)
    return quick if quick is not None else parse_slowly(text)


def parse_slowly(text: str) -> Parsed:
    """Reads one client message with Python's json and pydantic; raises RefusedMessage.

    The JSON is read as Python reads it (NaN and Infinity included), so that an action carrying a
    non-finite number is still answered under its move_id; the number itself is refused by the schema.
    """
    if _nested_deeper_than(text, DEEPEST_READ):
        raise RefusedMessage(TOO_DEEP, hello=False)
    try:
        raw = json.loads(text)
    except ValueError as error:
        raise RefusedMessage(ApiError("bad_request", f"not JSON: {error}"), hello=False) from None
    except RecursionError:  # json's C parser gives up on deep nesting (a 3 KB frame of lists)
        raise RefusedMessage(TOO_DEEP, hello=False) from None
    try:
        return _client_message.validate_python(raw)
    except RecursionError:
        raise RefusedMessage(TOO_DEEP, hello=False) from None
    except ValidationError as error:
        fields = raw if isinstance(raw, dict) else {}
        move_id = fields.get("move_id")
        extra = {"move_id": move_id} if isinstance(move_id, str) and len(move_id) <= 64 else {}
        refusal = ApiError("bad_request", describe_validation_error(error.errors()), extra=extra)
        raise RefusedMessage(refusal, hello=fields.get("type") == "hello") from None


def quick_action(text: str) -> QuickAction | None:
    """Returns the `action` message `text` holds when it is one `ActionMessage` takes as it is (the
    same fields the slow path reads from it); None for anything else, refusals included.

    >>> quick_action('{"type":"action","action":{"type":"resign"},"version":3,"move_id":"m1"}').version
    3
    >>> quick_action('{"type":"action","action":{"type":"resign"},"version":3}') is None
    True
    """
    try:
        raw = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    if type(raw) is not dict or len(raw) != _ACTION_FIELDS or raw.get("type") != "action":
        return None
    action, version, move_id = raw.get("action"), raw.get("version"), raw.get("move_id")
    if type(version) is not int or not 0 <= version <= MAX_STORED_INT:
        return None
    if type(move_id) is not str or _MOVE_ID.fullmatch(move_id) is None:
        return None
    if type(action) is not dict or not _plain(action, 0):
        return None
    kind = action.get("type")
    if kind in SERVER_ONLY_ACTIONS or (kind == "claim" and len(action) != 1):
        return None  # refused by `schemas.client_action`: the slow path says so
    return QuickAction(action, version, move_id)


def _plain(value: Any, depth: int) -> bool:
    """Tells whether JSON orjson read is what `schemas.ensure_plain_json` takes (nested at most
    MAX_JSON_DEPTH, every number finite) and what Python's json reads the same (no float so large it
    may have been an integer)."""
    inner = depth + 1
    if inner > MAX_JSON_DEPTH:
        return not value  # its keys and items would be nested too deeply
    for item in value.values() if type(value) is dict else value:
        kind = type(item)
        if kind is dict or kind is list:
            if not _plain(item, inner):
                return False
        elif kind is float and not -_FLOAT_EXACT_BELOW < item < _FLOAT_EXACT_BELOW:
            return False
    return True
