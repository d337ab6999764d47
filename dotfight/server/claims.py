"""`claim` (PROTOCOL.md, "Time, absence, rematch and phrases"): the waiting side of a live page asks for
the win when the side to act has left (or its time is up). A claim is the server's to decide and never
reaches the engine: when due, the server writes `abandon` (or `time_out`) for the other side.

Until the rooms track absence and clocks, no claim is ever due: `answer_claim` refuses every one with
`illegal_action` (PROTOCOL's answer when the claim is not due). This module is the one spot to replace
when claims are wired.
"""

from __future__ import annotations

from typing import Any

from dotfight.server.errors import ApiError
from dotfight.server.pages.authority import Applied, Seat


def is_claim(action: dict[str, Any]) -> bool:
    """Tells whether a client's action is a `claim` (the schemas already refused one with fields)."""
    return action.get("type") == "claim"


async def answer_claim(page_id: str, seat: Seat, move_id: str | None) -> Applied:
    """Answers a seat's claim on a page; for now always refuses it, as not due (`illegal_action`)."""
    raise ApiError(
        "illegal_action",
        "claim: the other side is here and its time is not up; there is nothing to claim",
        reason="claim_not_due",
    )
