"""The snapshot's `clock` of a page just created (PROTOCOL.md, "Time, absence, rematch and phrases").

A stopgap, in one function: the pure clock model (dotfight/server/people/clock.py) gives the full
snapshot — who runs and until when — once the rooms keep the clock. Until then a page just created shows
its clock as created, both sides' whole time, nobody running, and the server's time.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from dotfight.store.records import iso_utc_z


def created_clock_snapshot(clock: dict[str, int] | None, now: datetime) -> dict[str, Any] | None:
    """Returns the `clock` a new page's snapshot carries: None without a clock; else the clock as
    created, `blue_s` and `red_s` at `initial_s` (live) or `per_move_s` (link), nobody running.

    >>> from datetime import UTC
    >>> created_clock_snapshot({"per_move_s": 86400}, datetime(2026, 12, 1, tzinfo=UTC))
    {'per_move_s': 86400, 'blue_s': 86400, 'red_s': 86400, 'running': None, 'deadline': None,
     'now': '2026-12-01T00:00:00Z'}
    >>> created_clock_snapshot(None, datetime(2026, 12, 1, tzinfo=UTC)) is None
    True
    """
    if clock is None:
        return None
    whole = clock["initial_s"] if "initial_s" in clock else clock["per_move_s"]
    shown: dict[str, Any] = {**clock, "blue_s": whole, "red_s": whole}
    return {**shown, "running": None, "deadline": None, "now": iso_utc_z(now)}
