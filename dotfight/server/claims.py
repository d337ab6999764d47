"""`claim` (PROTOCOL.md, "Time, absence, rematch and phrases"): the waiting side of a live page asks for
the win when the side to act has left (or its time is up). A claim is the server's to decide and never
reaches the engine as it is: when due (`people.absence.claim_outcome`), the server writes `abandon` (or
`time_out`, when the other's time is up by the stored clock) acting as the other side, at the version
the claimant saw and under the claim's move_id, through the page authority like any action; the
claimant is answered as for any action.

A retried claim (the same move_id) gets its first answer, though the entry it wrote acts as the other
side: the log's entry under that move_id is answered to the claimant when it is the claimant's own, or
an `abandon`/`time_out` written against it (what only a claim of the claimant's writes under a move_id
of the claimant's choosing). Anything else the other side logged under it stays refused.

Refusals change nothing: a seat of a page not live (a bot, one-phone or link page) or a finished one,
`illegal_action`; a claim while the other is here or before the grace, `illegal_action` with reason
`claim_not_due`. A watcher cannot claim (`bad_token`, before this is reached).
"""

from __future__ import annotations

import asyncio
from typing import Any

from dotfight.engine.actions import SERVER_ONLY_ACTIONS
from dotfight.server.errors import ApiError
from dotfight.server.pages.authority import Applied, Arrival, Seat
from dotfight.server.pages.errors import BadRequest
from dotfight.server.people.absence import claim_outcome
from dotfight.server.people.clock import ClockError, ClockState
from dotfight.server.services import Services
from dotfight.store.records import LogEntry


def is_claim(action: dict[str, Any]) -> bool:
    """Tells whether a client's action is a `claim` (the schemas already refused one with fields)."""
    return action.get("type") == "claim"


def answers_claim_of(side: str, entry: LogEntry) -> bool:
    """Tells whether a logged entry is the first answer of `side`'s action under its move_id: its own
    move, or what its claim wrote against the other side (`abandon` or `time_out`) — never what was
    written against `side` itself, nor the other side's own move.

    >>> abandon = LogEntry(9, "red", {"type": "abandon"}, [], "c1")
    >>> answers_claim_of("blue", abandon), answers_claim_of("red", abandon)
    (True, False)
    >>> stop = LogEntry(9, "red", {"type": "stop"}, [], "c1")
    >>> answers_claim_of("blue", stop), answers_claim_of("red", stop)
    (False, True)
    """
    written_by_the_server = entry.action.get("type") in SERVER_ONLY_ACTIONS
    return (entry.side == side) != written_by_the_server


async def answer_claim(
    services: Services, page_id: str, seat: Seat, version: int, move_id: str | None
) -> Applied:
    """Answers a seat's claim on a page at the version it saw: the first answer of a retried move_id,
    the `abandon`/`time_out` written for the other side when the claim is due, or a refusal."""
    authority = services.authority
    page = await authority.page(page_id)
    if move_id is not None and seat.side is not None:
        first = await asyncio.to_thread(services.store.logged_move, page_id, move_id)
        if first is not None:
            if not answers_claim_of(seat.side, first):
                raise BadRequest("this move_id was already used by the other side")
            if page.state.version < first.version:
                page = await authority.page(page_id)
            return Applied.sent(page.state, first.version, first.events, duplicate=True)
    if seat.side is None or page.meta.mode != "live":
        raise ApiError(
            "illegal_action", "claim: only a seat of a live page may claim the win", reason="claim_not_live"
        )
    if page.over:
        raise ApiError("illegal_action", "claim: the page is already over", reason="game_over")
    moved = await services.store.views.last_moved(page_id)
    rooms = services.rooms
    facts = await rooms.absence_facts(page, moved)
    actor = page.state.actor
    outcome = None
    if facts is not None:
        outcome = claim_outcome(
            claimant="blue" if seat.side == "blue" else "red",
            actor=actor,
            actor_present=facts.present,
            turn_passed_at=facts.moved_at,
            actor_left_at=facts.left_at,
            now=rooms.now(),
            grace_s=rooms.absence_grace_s,
            clock=stored_clock(None if moved is None else moved.clock_state),
        )
    if outcome is None or actor is None:
        raise ApiError(
            "illegal_action",
            "claim: the other side is here (or has not been away long enough) and its time is not up",
            reason="claim_not_due",
        )
    # Written by the server for the claimant: charged at its decision, with no lag allowance.
    return await authority.act(
        page_id, Seat(side=actor), {"type": outcome}, version, move_id, Arrival(rooms.now(), 0.0)
    )


def stored_clock(raw: dict[str, Any] | None) -> ClockState | None:
    """Reads a page's stored clock state (None: no clock, or one the model did not write)."""
    if raw is None:
        return None
    try:
        return ClockState.from_json(raw)
    except ClockError:
        return None
