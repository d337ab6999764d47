"""A page's live state in this process, in one place: its `Room` (sockets, the version they heard,
presence, catch-up and ordering; what the page waits for comes next), the `Rooms` registry, and the
sockets' `Connection` and wire messages."""

from dotfight.server.pages.wire import compact_json, events_message
from dotfight.server.rooms.connection import (
    CLOSE_TOO_MANY_SOCKETS,
    CLOSE_TOO_SLOW,
    NOBODY,
    Connection,
    PresenceKey,
    presence_message,
)
from dotfight.server.rooms.registry import Rooms
from dotfight.server.rooms.room import Room

__all__ = [
    "CLOSE_TOO_MANY_SOCKETS",
    "CLOSE_TOO_SLOW",
    "NOBODY",
    "Connection",
    "PresenceKey",
    "Room",
    "Rooms",
    "compact_json",
    "events_message",
    "presence_message",
]
