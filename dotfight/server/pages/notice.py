"""A committed action's notice to the other processes serving the database (issue 22, item 2).

On PostgreSQL every committed action is NOTIFYed inside its own write transaction (broadcast.py). The
payload says which version of which page committed and, when it fits in PostgreSQL's 8000 bytes, what
the other processes need so they never work the move out again:

    "<page_id> <version>"                               bare: read the log for it
    "<page_id> <version> <entry JSON>\n<events message>"  whole

The entry JSON (`{"side", "action", "to_act", "clock"}`) is what a process needs to advance its state in
memory lazily (the next time it decides an action of the page: one engine step on the action, never a
read of the log), and the events message is the `{type: "events"}` text exactly as the page's sockets
receive it (the turn's options included; on a page with a clock, its clock as of the move's decision:
the deadline is absolute, so a phone counts down from it the same). Compact JSON holds no raw newline,
so the first one ends the entry. One notice per action: a group commit's several actions are NOTIFYed
in one statement, each with its own payload (any one of them may be too long, or be the one a
listener misses).

`PendingNotices` hands an action's payload from the authority, which made the move, to the NOTIFY hook
run on the writer's thread inside the move's transaction (the store's interface carries page ids and
versions only).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import orjson

from dotfight.engine import Side
from dotfight.server.pages.wire import compact_json

# PostgreSQL refuses a NOTIFY payload of 8000 bytes or more.
MAX_PAYLOAD_BYTES = 7999
SIDES_OR_NONE = ("blue", "red", None)


@dataclass(frozen=True, slots=True)
class HeardMove:
    """Another process's committed action as its notice tells it: enough to advance a state in memory."""

    version: int
    side: str
    action: dict[str, Any]
    to_act: Side | None  # the side to act after it (None: the page is over)
    clock: dict[str, Any] | None  # the page's clock state after it (ClockState.to_json), None: no clock


@dataclass(frozen=True, slots=True)
class CommitNotice:
    """A commit heard through the broadcast: the page and version, and the rest of the payload unread
    (`body`: empty for a bare notice). The parts are parsed only by a process that needs them."""

    page_id: str
    version: int
    body: str = ""

    @property
    def whole(self) -> bool:
        """Tells whether the notice carries the move (else only the log has it)."""
        return bool(self.body)

    def message(self) -> str:
        """Returns the events message as the page's sockets receive it (a whole notice only)."""
        return self.body.partition("\n")[2]

    def move(self) -> HeardMove:
        """Returns the action the notice carries (a whole notice only; ValueError for a malformed one)."""
        entry = orjson.loads(self.body.partition("\n")[0])
        if not isinstance(entry, dict) or not isinstance(entry.get("action"), dict):
            raise ValueError("not a notice's entry")
        to_act = entry.get("to_act")
        if to_act not in SIDES_OR_NONE:
            raise ValueError(f"not a side to act: {to_act!r}")
        clock = entry.get("clock")
        return HeardMove(
            self.version,
            str(entry["side"]),
            entry["action"],
            cast("Side | None", to_act),
            clock if isinstance(clock, dict) else None,
        )


def notice_payload(page_id: str, move: HeardMove, message: str, max_bytes: int = MAX_PAYLOAD_BYTES) -> str:
    """Returns a committed action's NOTIFY payload: whole when it fits in `max_bytes`, else bare.

    >>> move = HeardMove(7, "blue", {"type": "resign"}, None, None)
    >>> notice_payload("p1", move, '{"type":"events"}')
    'p1 7 {"side":"blue","action":{"type":"resign"},"to_act":null,"clock":null}\\n{"type":"events"}'
    >>> notice_payload("p1", move, '{"type":"events"}', max_bytes=20)
    'p1 7'
    """
    head = f"{page_id} {move.version}"
    entry = {"side": move.side, "action": move.action, "to_act": move.to_act, "clock": move.clock}
    whole = f"{head} {compact_json(entry)}\n{message}"
    # Bytes, not characters: PostgreSQL counts the payload in the database's encoding (UTF-8).
    if len(whole) <= max_bytes // 4 or len(whole.encode()) <= max_bytes:
        return whole
    return head


def parse_notice(payload: str) -> CommitNotice | None:
    """Reads a NOTIFY payload of channel `dotfight_pages`; None when it is not one.

    >>> parse_notice("abc123 17"), parse_notice("abc123"), parse_notice("a b")
    (CommitNotice(page_id='abc123', version=17, body=''), None, None)
    >>> parse_notice('abc 3 {"side":"red"}\\n{}').whole
    True
    """
    # Sliced once: every process hears every notice, its own too, and most read no more than the head.
    first = payload.find(" ")
    second = payload.find(" ", first + 1) if first > 0 else -1
    version = payload[first + 1 : second] if second > 0 else payload[first + 1 :]
    if first <= 0 or not version.isdigit():
        return None
    return CommitNotice(payload[:first], int(version), payload[second + 1 :] if second > 0 else "")


class PendingNotices:
    """The payloads of the actions being written, by page and version: handed in by whoever made the
    move before it is queued, read by the NOTIFY hook inside its transaction (the writer's thread), and
    let go once the write is answered. Each page has one write in flight at a time (its lock)."""

    def __init__(self) -> None:
        self._payloads: dict[tuple[str, int], str] = {}

    def hand(self, page_id: str, version: int, payload: str) -> None:
        """Keeps the payload of the action of `version` about to be written."""
        self._payloads[(page_id, version)] = payload

    def payload(self, page_id: str, version: int) -> str:
        """Returns the payload to NOTIFY for a write (bare when none was handed in)."""
        return self._payloads.get((page_id, version)) or f"{page_id} {version}"

    def drop(self, page_id: str, version: int) -> None:
        """Lets a written (or refused) action's payload go."""
        self._payloads.pop((page_id, version), None)

    def __len__(self) -> int:
        return len(self._payloads)
