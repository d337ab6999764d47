"""The room's messages as sent on the page socket: serialised once, for every socket of a page."""

from __future__ import annotations

import json
from typing import Any

import orjson

PresenceKey = tuple[bool, bool]
NOBODY: PresenceKey = (False, False)


def compact_json(message: dict[str, Any]) -> str:
    """Serialises a message as sent on the WebSocket (no spaces), with orjson: the events message is made
    once per action (about 0.7 µs against stdlib json's 12); stdlib json answers what orjson refuses
    (integers beyond 64 bits).

    >>> compact_json({"type": "ack", "move_id": "m1", "version": 5})
    '{"type":"ack","move_id":"m1","version":5}'
    """
    try:
        return orjson.dumps(message).decode()
    except orjson.JSONEncodeError:
        return json.dumps(message, separators=(",", ":"))


def events_message(version: int, events: list[dict[str, Any]]) -> str:
    """Serialises the `{type: "events"}` message (once per action, for every connection of a page)."""
    return compact_json({"type": "events", "version": version, "events": events})


def presence_message(presence: PresenceKey) -> str:
    """Serialises the `{type: "presence", blue, red}` message."""
    return compact_json({"type": "presence", "blue": presence[0], "red": presence[1]})
