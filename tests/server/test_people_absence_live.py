"""Absence on a real `dotfight serve` with a short grace (DOTFIGHT_LIVE_ABSENCE_GRACE_S=2, issue 19 item
4): red's socket closes on red's move, blue's presence gets claim_at about the close plus the grace, a
claim before it is refused and one after it ends the page abandoned for blue (a retry gets its first
answer); red coming back before the claim clears claim_at."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.store.test_multiprocess_live import LiveSocket
from tests.support.page_client import act, create_page, snapshot
from tests.support.server_process import RELAXED_ACTION_BUDGET, ServerProcess

GRACE_S = 2.0
# The presence delay (0.05 s) and a busy machine between the close and the server's noticing it.
CLOSE_NOTICED_WITHIN_S = 1.0
ABSENCE_ENV = {
    **RELAXED_ACTION_BUDGET,
    "DOTFIGHT_PAGE_CREATION_BURST": "1000",
    "DOTFIGHT_LIVE_ABSENCE_GRACE_S": str(GRACE_S),
}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    """A server of one's own with the short grace."""
    process = ServerProcess.on_sqlite(tmp_path, extra_env=ABSENCE_ENV)
    process.start()
    yield process
    process.stop()


def seconds_of(iso: str) -> float:
    """An ISO 8601 UTC time (`…Z`) as seconds since the epoch."""
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def claim_at_heard(socket: LiveSocket, after: int = 0, timeout: float = 10.0) -> float | None:
    """The claim_at of the newest presence heard after the first `after` messages (None: null)."""
    deadline = time.monotonic() + timeout
    while not (heard := [m for m in socket.messages[after:] if m["type"] == "presence"]):
        assert time.monotonic() < deadline, f"no presence heard; heard {socket.messages[-3:]}"
        time.sleep(0.02)
    claim_at = heard[-1]["claim_at"]
    return None if claim_at is None else seconds_of(claim_at)


def claim_over(socket: LiveSocket, version: int, move_id: str) -> dict[str, Any]:
    """Sends a claim over the socket and returns its answer (ack or error)."""
    socket.connection.send(
        f'{{"type": "action", "action": {{"type": "claim"}}, "version": {version}, "move_id": "{move_id}"}}'
    )
    return socket.wait_for(lambda m: m.get("move_id") == move_id and m["type"] in ("ack", "error"))


def red_to_move(
    blue_server: ServerProcess, red_server: ServerProcess
) -> tuple[str, dict[str, str], LiveSocket, LiveSocket]:
    """A live page with blue's socket on `blue_server` and red's on `red_server`, both heard by blue,
    set up by blue to red's move (version 2)."""
    created = create_page(blue_server, preset="quick", mode="live")
    page_id, seats = created["id"], created["seats"]
    blue = LiveSocket(blue_server, page_id, seats["blue"])
    red = LiveSocket(red_server, page_id, seats["red"])
    blue.wait_presence((True, True))
    blue.send_action({"type": "quick_setup"}, 0, "s0")
    blue.send_action({"type": "ready"}, 1, "s1")
    red.wait_for(lambda m: m["type"] == "events" and m["version"] == 2)
    return page_id, seats, blue, red


def play_the_claim(
    blue_server: ServerProcess, red_server: ServerProcess, claim_server: ServerProcess
) -> None:
    """Red closes on red's move; blue counts down to claim_at; a claim (over HTTP on `claim_server`)
    before it is refused, after it ends the page for blue; blue's socket hears it; a retry is answered
    as the first time."""
    page_id, seats, blue, red = red_to_move(blue_server, red_server)
    assert claim_at_heard(blue) is None
    heard_so_far = len(blue.messages)
    closed_at = time.time()
    red.close()
    blue.wait_presence((True, False))
    claim_at = claim_at_heard(blue, heard_so_far)
    assert claim_at is not None
    assert closed_at + GRACE_S - 0.1 <= claim_at <= closed_at + GRACE_S + CLOSE_NOTICED_WITHIN_S
    early = act(claim_server, page_id, seats["blue"], {"type": "claim"}, 2, move_id="early")
    assert early.status_code == 422 and early.json()["error"]["reason"] == "claim_not_due", early.text
    assert snapshot(claim_server, page_id)["version"] == 2
    time.sleep(max(0.0, claim_at - time.time()) + 0.05)
    won = act(claim_server, page_id, seats["blue"], {"type": "claim"}, 2, move_id="claim")
    assert won.status_code == 200, won.text
    assert {"type": "game_over", "winner": "blue", "reason": "abandoned"} in won.json()["events"]
    heard = blue.wait_for(lambda m: m["type"] == "events" and m["version"] == 3)
    assert {"type": "game_over", "winner": "blue", "reason": "abandoned"} in heard["events"]
    again = claim_over(blue, 2, "claim")
    assert again == {"type": "ack", "move_id": "claim", "version": 3, "duplicate": True}
    page = snapshot(blue_server, page_id)
    assert (page["phase"], page["winner"], page["version"]) == ("over", "blue", 3)
    blue.close()


def test_a_claim_after_the_grace_ends_the_page_abandoned(server: ServerProcess) -> None:
    play_the_claim(server, server, server)


def test_red_back_before_the_claim_clears_claim_at(server: ServerProcess) -> None:
    page_id, seats, blue, red = red_to_move(server, server)
    red.close()
    blue.wait_presence((True, False))
    assert claim_at_heard(blue) is not None
    back = LiveSocket(server, page_id, seats["red"])
    blue.wait_presence((True, True))
    assert claim_at_heard(blue) is None
    time.sleep(GRACE_S + 0.2)
    refused = claim_over(blue, 2, "late")
    assert (refused["type"], refused["code"], refused["reason"]) == (
        "error",
        "illegal_action",
        "claim_not_due",
    )
    assert snapshot(server, page_id)["version"] == 2
    back.close()
    blue.close()


def test_after_a_restart_nobody_is_claimed_against_for_the_outage(server: ServerProcess) -> None:
    created = create_page(server, preset="quick", mode="live")
    page_id, seats = created["id"], created["seats"]
    for version, action in enumerate(({"type": "quick_setup"}, {"type": "ready"})):
        assert act(server, page_id, seats["blue"], action, version).status_code == 200
    server.stop()
    stopped_at = time.time()
    time.sleep(GRACE_S + 0.5)  # down for longer than the grace, red's move all along
    restarted = server.another()
    try:
        blue = LiveSocket(restarted, page_id, seats["blue"])
        claim_at = claim_at_heard(blue)
        # Counted from when the server came back, not from red's turn before the outage.
        assert claim_at is not None and claim_at >= stopped_at + GRACE_S + 0.5 + GRACE_S
        refused = act(restarted, page_id, seats["blue"], {"type": "claim"}, 2, move_id="now")
        assert refused.status_code == 422 and refused.json()["error"]["reason"] == "claim_not_due"
        blue.close()
    finally:
        restarted.stop()


def test_a_claim_against_dawood_bot_is_refused_and_changes_nothing(server: ServerProcess) -> None:
    created = create_page(server, preset="quick", mode="bot", bot={"side": "red", "strength": "beginner"})
    page_id, blue = created["id"], created["seats"]["blue"]
    for version, action in enumerate(({"type": "quick_setup"}, {"type": "ready"})):
        assert act(server, page_id, blue, action, version).status_code == 200
    time.sleep(GRACE_S + 0.2)
    version = snapshot(server, page_id)["version"]
    refused = act(server, page_id, blue, {"type": "claim"}, version, move_id="bot")
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"] == {
        "code": "illegal_action",
        "message": "claim: only a seat of a live page may claim the win",
        "reason": "claim_not_live",
    }
    assert snapshot(server, page_id)["phase"] != "over"
