"""Live pages with a clock on a real `dotfight serve` (issue 19): one set up and at red's turn, and waiting
for a page to end by itself. Bounded loops only."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tests.support.page_client import act, create_page, snapshot
from tests.support.players import nearest_snipe_action
from tests.support.server_process import ServerProcess


@dataclass(frozen=True)
class ClockPage:
    """A live page with a clock, its seats' tokens, and its snapshot when it was handed over."""

    id: str
    seats: dict[str, str]
    snapshot: dict[str, Any]

    @property
    def deadline(self) -> float:
        """The running side's deadline (seconds since the epoch) in the snapshot."""
        return seconds(self.snapshot["clock"]["deadline"])


def seconds(iso: str) -> float:
    """Reads the clock's ISO 8601 UTC time as seconds since the epoch."""
    return datetime.fromisoformat(iso).timestamp()


def play_one(server: ServerProcess, page: ClockPage, shown: dict[str, Any]) -> dict[str, Any]:
    """Plays the side to act's next simple action over HTTP; returns the page's snapshot after it."""
    side = shown["side_to_act"]
    answer = act(server, page.id, page.seats[side], nearest_snipe_action(shown), shown["version"])
    assert answer.status_code == 200, answer.text
    return snapshot(server, page.id)


def live_page_at_reds_turn(server: ServerProcess, initial_s: int = 15) -> ClockPage:
    """Creates a live quick page with `initial_s` each, sets it up and plays blue's first turn (one
    flick): red's time runs from the answer on."""
    clock = {"initial_s": initial_s, "increment_s": 0}
    created = create_page(server, preset="quick", mode="live", clock=clock)
    page = ClockPage(created["id"], created["seats"], created["snapshot"])
    shown = created["snapshot"]
    for _ in range(10):  # quick setup, two readies, blue's flick
        if shown["phase"] == "play" and shown["side_to_act"] == "red":
            return ClockPage(page.id, page.seats, shown)
        shown = play_one(server, page, shown)
    raise AssertionError(f"not at red's turn: {shown}")


def wait_over(server: ServerProcess, page_id: str, within_s: float) -> tuple[dict[str, Any], float]:
    """Polls the page until it is over (within `within_s`); returns its snapshot and when it was seen
    over (seconds since the epoch)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        shown = snapshot(server, page_id)
        if shown["phase"] == "over":
            return shown, time.time()
        time.sleep(0.05)
    raise AssertionError(f"page {page_id} not over within {within_s} s")


def endings(server: ServerProcess, page_id: str) -> list[dict[str, Any]]:
    """The page's logged `time_out` actions, with their versions and sides."""
    answer = server.http.get(f"/api/pages/{page_id}/log")
    assert answer.status_code == 200, answer.text
    entries = answer.json()["entries"]
    return [entry for entry in entries if entry["action"]["type"] == "time_out"]
