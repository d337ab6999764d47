"""Clocks on a real `dotfight serve` (issue 19, "How it is checked"): a live page with a 15 s clock ends on
red's time with nobody touching it; a move sent a little before the flag wins the race, never both; a
restart in the middle of a turn, or a database outage, charges nobody for the downtime; SIGKILL of the
process that watched a page's clock still ends it on time (two processes on one SQLite file; the
PostgreSQL case is in tests/store/test_people_clocks_postgres.py). Loops are bounded."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from typing import Any

from tests.hostile.conftest import StartServer
from tests.support.clock_pages import (
    ClockPage,
    endings,
    live_page_at_reds_turn,
    seconds,
    wait_over,
)
from tests.support.page_client import act, outside_write_lock, snapshot
from tests.support.players import nearest_snipe_action

# The bound: the server writes `time_out` within 10 s of the deadline.
WITHIN_S = 10.0


def _assert_ended_on_time(server: Any, page: ClockPage) -> float:
    """Waits for the page to end by itself on red's time; returns the time-out's delay after the deadline
    (its commit time, as the log says)."""
    shown, _ = wait_over(server, page.id, page.deadline - time.time() + WITHIN_S + 5)
    assert shown["winner"] == "blue" and shown["clock"]["running"] is None
    [ending] = endings(server, page.id)
    assert ending["side"] == "red" and ending["move_id"] == f"time_out@{page.snapshot['version']}"
    assert {"type": "game_over", "winner": "blue", "reason": "time"} in ending["events"]
    delay = seconds(ending["at"].replace("Z", "+00:00")) - page.deadline
    assert 0 <= delay <= WITHIN_S, delay
    return delay


def test_a_live_page_ends_on_reds_time_with_nobody_touching_it(start_server: StartServer) -> None:
    server = start_server()
    page = live_page_at_reds_turn(server, initial_s=15)
    clock = page.snapshot["clock"]
    assert clock["running"] == "red" and clock["initial_s"] == 15
    assert 14 <= page.deadline - time.time() <= 15
    delay = _assert_ended_on_time(server, page)
    # Written at the deadline plus the lag cap (1 s), give or take the machine's load.
    assert delay >= 1.0
    # `dotfight replay` verifies the page from its log, the server's time-out included.
    replay = subprocess.run(
        [sys.executable, "-m", "dotfight.cli", "replay", f"{server.base_url}/api/pages/{page.id}/log"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert replay.returncode == 0, replay.stdout + replay.stderr


def test_a_move_a_little_before_the_flag_wins_never_both(start_server: StartServer) -> None:
    """Pages side by side, red's move sent at the deadline plus an offset: well before, it is applied and
    no time-out follows; well after, it is refused and the time-out is written; around the flag either,
    never both (and never neither)."""
    server = start_server()
    offsets = [-0.6, -0.3, -0.15, -0.05, 0.0, 0.05, 0.1, 0.15, 0.3, 0.6, 1.5, 2.5]
    pages = [live_page_at_reds_turn(server, initial_s=15) for _ in offsets]
    outcomes: dict[str, tuple[int, str | None]] = {}

    def send(page: ClockPage, offset: float) -> None:
        time.sleep(max(0.0, page.deadline + offset - time.time()))
        shown = page.snapshot
        answer = act(server, page.id, page.seats["red"], nearest_snipe_action(shown), shown["version"])
        code = None if answer.status_code == 200 else answer.json()["error"].get("reason")
        outcomes[page.id] = (answer.status_code, code)

    threads = [threading.Thread(target=send, args=pair) for pair in zip(pages, offsets, strict=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    time.sleep(3.5)  # past every deadline plus the cap plus a poll: any time-out is written by now
    for page, offset in zip(pages, offsets, strict=True):
        # Red's time-out in place of its move (a later one may follow a bonus flick, at a later version).
        at_the_flag = f"time_out@{page.snapshot['version']}"
        written = [entry for entry in endings(server, page.id) if entry["move_id"] == at_the_flag]
        applied = outcomes[page.id][0] == 200
        assert applied != bool(written), (offset, outcomes[page.id], written)  # one, never both
        if offset <= -0.15:
            assert applied, offset
        if offset >= 1.5:
            # Refused as late, or (once the time-out is in) as stale.
            assert not applied and outcomes[page.id][1] in ("out_of_time", None), (offset, outcomes)
        if applied:  # the move's version is red's flick, not a time-out
            assert snapshot(server, page.id)["version"] > page.snapshot["version"]


def test_a_restart_in_the_middle_of_a_turn_charges_nobody_for_the_downtime(start_server: StartServer) -> None:
    server = start_server()
    page = live_page_at_reds_turn(server, initial_s=60)
    started = (
        seconds(page.snapshot["clock"]["deadline"].replace("Z", "+00:00")) - page.snapshot["clock"]["red_s"]
    )
    time.sleep(1.0)
    killed = time.time()
    server.kill()
    time.sleep(4.0)  # down: nobody can play
    launched = time.time()
    server.start()
    shown = snapshot(server, page.id)
    read = seconds(shown["clock"]["now"].replace("Z", "+00:00"))
    charged = 60 - shown["clock"]["red_s"]
    # Charged only while the server was up: before the kill (less up to a beat period given back: the
    # downtime counts from the last beat) and after the restart's credit (at most since its launch).
    before, after = killed - started, read - launched
    assert before - 1.5 <= charged <= before + after + 0.3, (charged, before, after)
    assert charged < read - started - 3.5  # not the 4 s it was down
    assert shown["clock"]["running"] == "red"


def test_sigkill_of_the_process_watching_a_clock_still_ends_the_page_on_time(
    start_server: StartServer,
) -> None:
    watcher = start_server()
    other = watcher.another()  # the same SQLite file: it only polls the deadlines
    try:
        page = live_page_at_reds_turn(watcher, initial_s=15)
        watcher.kill()
        _assert_ended_on_time(other, page)
    finally:
        other.stop()


def test_a_database_outage_charges_nobody(start_server: StartServer) -> None:
    """The SQLite file's write lock held 8 s by another program: no beat, no move, no time-out can be
    written; the first beat after it credits the stretch to red's running clock."""
    lock_s = 8.0
    server = start_server(extra_env={"DOTFIGHT_DB_BUSY_TIMEOUT_S": "1.0"})
    page = live_page_at_reds_turn(server, initial_s=15)
    started = page.deadline - 15
    with outside_write_lock(server.database_url.removeprefix("sqlite:///"), lock_s) as lock:
        locked = time.time()
        lock.take()
        lock.wait_released()
    time.sleep(3.0)  # a beat fails its busy timeout, then the next one credits
    shown = snapshot(server, page.id)
    assert shown["phase"] == "play", shown["phase"]  # red's 15 s would have run out without the credit
    charged = 15 - shown["clock"]["red_s"]
    read = seconds(shown["clock"]["now"].replace("Z", "+00:00"))
    assert locked - started - 1.5 <= charged <= read - started - lock_s + 0.5, (charged, read - started)
